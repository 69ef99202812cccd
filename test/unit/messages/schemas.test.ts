import { parseSendRequest } from '#shared/messages/schemas.ts';
import { ApiError } from '#shared/http/errors.ts';
import { MAX_DEPTH, MAX_ITEMS, MAX_MEMBERS } from '#shared/messages/schema/shape.ts';

const to = '+5215512345678';
const long = (n: number) => 'x'.repeat(n);

const detailsOf = (body: unknown): Record<string, string[]> => {
  try {
    parseSendRequest(body);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).body.error).toBe('validation_error');
    return (err as ApiError).body.details as Record<string, string[]>;
  }
  throw new Error('expected a validation error');
};

const upstream = { messaging_product: 'whatsapp', to };
const replyAction = { buttons: [{ type: 'reply', reply: { id: 'a', title: 'A' } }] };
/** Meta's media carousel card, as pywa builds one. */
const card = (i: number) => ({ card_index: i, type: 'cta_url', header: { type: 'image', image: { link: 'https://example.com/a.png' } }, body: { text: 'Card' }, action: { name: 'cta_url', parameters: { display_text: 'Go', url: 'https://example.com' } } });
const carousel = (cards: unknown[]) => ({ ...upstream, type: 'interactive', interactive: { type: 'carousel', body: { text: 'b' }, action: { cards } } });
const templateCard = (i: number, link = 'https://example.com/a.png') => ({ card_index: i, components: [{ type: 'header', parameters: [{ type: 'image', image: { link } }] }, { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'p' }] }] });
const templateCarousel = (cards: unknown[]) => ({ ...upstream, type: 'template', template: { name: 't', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'x' }] }, { type: 'carousel', cards }] } });

describe('send request validation', () => {
  it.each([
    ['missing to', { content: 'hi' }, 'to'],
    ['to without +', { to: '5215512345678', content: 'hi' }, 'to'],
    ['to with letters', { to: '+52abc', content: 'hi' }, 'to'],
    ['text without content', { to }, 'type'],
    ['unknown type', { to, type: 'fax', fax: {} }, 'type'],
    // In service style `type` is required for every kind but text (the contract).
    ['an image without type', { to, image: { link: 'https://example.com/a.jpg' } }, 'type'],
    ['a template shortcut without type', { to, templateName: 'hello_world' }, 'type'],
    ['empty content', { to, content: '' }, 'content'],
    ['text over 4096', { to, content: long(4097) }, 'content'],
    ['upstream style with empty body', { messaging_product: 'whatsapp', to, type: 'text', text: { body: '' } }, 'text.body'],
    ['wrong messaging_product', { messaging_product: 'telegram', to, type: 'text', text: { body: 'hi' } }, 'messaging_product'],
    ['caption over 1024', { to, type: 'image', image: { link: 'https://example.com/a.jpg', caption: long(1025) } }, 'image.caption'],
    ['caption on audio', { to, type: 'audio', audio: { link: 'https://example.com/a.mp3', caption: 'no' } }, 'audio.caption'],
    ['caption on sticker', { to, type: 'sticker', sticker: { id: '123', caption: 'no' } }, 'sticker.caption'],
    ['link and id together', { to, type: 'image', image: { link: 'https://example.com/a.jpg', id: '123' } }, 'image'],
    ['neither link nor id', { to, type: 'video', video: { caption: 'x' } }, 'video'],
    ['link that is not a URL', { to, type: 'image', image: { link: 'not a url' } }, 'image.link'],
    ['document without filename', { to, type: 'document', document: { link: 'https://example.com/a.pdf' } }, 'document.filename'],
    ['filename on an image', { to, type: 'image', image: { link: 'https://example.com/a.jpg', filename: 'a.jpg' } }, 'image.filename'],
    ['latitude over 90', { to, type: 'location', location: { latitude: 91, longitude: 0 } }, 'location.latitude'],
    ['latitude missing', { to, type: 'location', location: { longitude: 0 } }, 'location.latitude'],
    ['longitude under -180', { to, type: 'location', location: { latitude: 0, longitude: -181 } }, 'location.longitude'],
    ['latitude a word', { to, type: 'location', location: { latitude: 'north', longitude: 0 } }, 'location.latitude'],
    ['latitude a string over 90', { to, type: 'location', location: { latitude: '90.5', longitude: '0' } }, 'location.latitude'],
    ['longitude null', { to, type: 'location', location: { latitude: 0, longitude: null } }, 'location.longitude'],
    ['content of white space only', { to, content: ' \n\t ' }, 'content'],
    ['caption over 1024 characters of emoji', { to, type: 'image', image: { link: 'https://example.com/a.jpg', caption: '😀'.repeat(1025) } }, 'image.caption'],
    ['location name over 1000', { to, type: 'location', location: { latitude: 0, longitude: 0, name: long(1001) } }, 'location.name'],
    ['location address over 1000', { to, type: 'location', location: { latitude: 0, longitude: 0, address: long(1001) } }, 'location.address'],
    ['reaction without message_id', { to, type: 'reaction', reaction: { emoji: '👍' } }, 'reaction.message_id'],
    ['reaction without emoji', { to, type: 'reaction', reaction: { message_id: 'wamid.x' } }, 'reaction.emoji'],
    ['ai as an array', { to, content: 'x', ai: [{ pause: true, pauseDuration: 99999 }] }, 'ai'],
    ['reaction with a word for an emoji', { to, type: 'reaction', reaction: { message_id: 'wamid.x', emoji: 'hello' } }, 'reaction.emoji'],
    ['reaction with two emoji', { to, type: 'reaction', reaction: { message_id: 'wamid.x', emoji: '👍👍' } }, 'reaction.emoji'],
    ['reaction with a digit', { to, type: 'reaction', reaction: { message_id: 'wamid.x', emoji: '1' } }, 'reaction.emoji'],
    ['template without name', { to, type: 'template' }, 'templateName'],
    ['template_parameters not strings', { to, type: 'template', templateName: 'order_update', template_parameters: [{}] }, 'template_parameters.0'],
    ['header_media without type', { to, type: 'template', templateName: 'promo_header', header_media: { url: 'https://example.com/a.jpg' } }, 'header_media.type'],
    ['header_media without url or media_id', { to, type: 'template', templateName: 'promo_header', header_media: { type: 'image' } }, 'header_media'],
    ['button index 10', { to, type: 'template', template: { name: 'reminder_buttons', language: { code: 'es_MX' }, components: [{ type: 'button', sub_type: 'quick_reply', index: '10', parameters: [] }] } }, 'template.components.0.index'],
    ['button without index', { to, type: 'template', template: { name: 'reminder_buttons', language: { code: 'es_MX' }, components: [{ type: 'button', sub_type: 'quick_reply' }] } }, 'template.components.0.index'],
    ['unknown parameter type', { to, type: 'template', template: { name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'money' }] }] } }, 'template.components.0.parameters.0.type'],
    ['currency amount not integer', { to, type: 'template', template: { name: 'x', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'currency', currency: { fallback_value: '$1', code: 'MXN', amount_1000: 1.5 } }] }] } }, 'template.components.0.parameters.0.currency.amount_1000'],
    ['more than 3 reply buttons', { to, type: 'interactive', interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [1, 2, 3, 4].map((i) => ({ type: 'reply', reply: { id: `b${i}`, title: `B${i}` } })) } } }, 'interactive.action.buttons'],
    ['two reply buttons with one id', { to, type: 'interactive', interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [{ type: 'reply', reply: { id: 'a', title: 'Yes' } }, { type: 'reply', reply: { id: 'a', title: 'No' } }] } } }, 'interactive.action.buttons'],
    ['two reply buttons with one title', { to, type: 'interactive', interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [{ type: 'reply', reply: { id: 'y', title: 'Yes' } }, { type: 'reply', reply: { id: 'n', title: 'Yes' } }] } } }, 'interactive.action.buttons'],
    ['reply title over 20', { to, type: 'interactive', interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [{ type: 'reply', reply: { id: 'a', title: long(21) } }] } } }, 'interactive.action.buttons.0.reply.title'],
    ['interactive without body', { to, type: 'interactive', interactive: { type: 'list', action: { button: 'Ver', sections: [{ rows: [{ id: 'a', title: 'A' }] }] } } }, 'interactive.body'],
    ['cta_url with a bad url', { to, type: 'interactive', interactive: { type: 'cta_url', body: { text: 'Go' }, action: { name: 'cta_url', parameters: { display_text: 'Open', url: 'nope' } } } }, 'interactive.action.parameters.url'],
    ['contacts empty', { to, type: 'contacts', contacts: [] }, 'contacts'],
    ['contact card without formatted_name', { to, type: 'contacts', contacts: [{ name: { first_name: 'Ana' } }] }, 'contacts.0.name.formatted_name'],
    ['ai.pauseDuration over 1440', { to, content: 'hi', ai: { pause: true, pauseDuration: 1441 } }, 'ai.pauseDuration'],
    ['ai.pauseDuration zero', { to, content: 'hi', ai: { pause: true, pauseDuration: 0 } }, 'ai.pauseDuration'],
    ['ai.disable not boolean', { to, content: 'hi', ai: { disable: 'yes' } }, 'ai.disable'],
    ['group recipient', { to, content: 'hi', recipient_type: 'group' }, 'recipient_type'],
  ])('rejects %s naming the field', (_label, body, field) => {
    // Act
    const details = detailsOf(body);

    // Assess
    expect(Object.keys(details)).toContain(field);
  });

  it.each([
    ['content and text.body together (one of them would go unsent)', { to, content: 'A', text: { body: 'B' } }, 'content (service style) or text.body (upstream style), not both'],
    ['a template with neither form', { to, type: 'template' }, 'needs templateName (shortcut) or a template object"'],
    ['a template with both forms', { to, type: 'template', templateName: 'a', template: { name: 'a', language: { code: 'es_MX' } } }, 'not both'],
  ])('rejects %s saying which', (_label, body, words) => {
    expect(JSON.stringify(detailsOf(body))).toContain(words);
  });

  it('accepts both text styles and infers the type', () => {
    expect(parseSendRequest({ to, content: 'hola' })).toMatchObject({ type: 'text', content: 'hola' });
    expect(parseSendRequest({ messaging_product: 'whatsapp', to, type: 'text', text: { body: 'hola' } })).toMatchObject({ type: 'text', text: { body: 'hola' } });
  });

  it('forwards text as sent: white space kept, limits counted in characters (an emoji is one)', () => {
    const body = { messaging_product: 'whatsapp', to, type: 'interactive', interactive: { type: 'button', body: { text: '  Choose:\n' }, footer: { text: ' foot ' }, action: { buttons: [{ type: 'reply', reply: { id: ' id1 ', title: ' Yes ' } }] } } };
    expect(parseSendRequest(body).interactive).toEqual(body.interactive);
    expect(parseSendRequest({ to, content: '  indented\n- list\n' }).content).toBe('  indented\n- list\n');
    expect(parseSendRequest({ messaging_product: 'whatsapp', to, type: 'text', text: { body: ' hi ' } }).text.body).toBe(' hi ');
    expect(() => parseSendRequest({ to, type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'a'.repeat(1020) + '😀'.repeat(4) } })).not.toThrow();
    expect(() => parseSendRequest({ to, content: '🇲🇽'.repeat(2048) })).not.toThrow();
    expect(() => parseSendRequest({ to, type: 'location', location: { latitude: 0, longitude: 0, name: '😀'.repeat(1000) } })).not.toThrow();
  });

  it('trims the ids and names it looks up (a message, media, template, language), unlike the texts it forwards', () => {
    expect(parseSendRequest({ to, type: 'reaction', reaction: { message_id: ' wamid.x ', emoji: '👍' } }).reaction.message_id).toBe('wamid.x');
    expect(parseSendRequest({ to, type: 'image', image: { id: ' 123 ' } }).image.id).toBe('123');
    expect(parseSendRequest({ to, content: 'hi', context: { message_id: ' wamid.y ' } }).context.message_id).toBe('wamid.y');
    const template = parseSendRequest({ to, type: 'template', template: { name: ' order_update ', language: { code: ' es_MX ' }, components: [] } }).template;
    expect([template.name, template.language.code]).toEqual(['order_update', 'es_MX']);
    expect(parseSendRequest({ to, type: 'template', templateName: ' hello_world ' }).templateName).toBe('hello_world');
  });

  it("takes coordinates as numbers or as the Cloud API's decimal strings, forwarded as sent", () => {
    const location = { latitude: '37.4847', longitude: '-122.1486', name: 'Meta HQ', address: '1 Hacker Way' };
    expect(parseSendRequest({ messaging_product: 'whatsapp', recipient_type: 'individual', to: '5215511111111', type: 'location', location }).location).toEqual(location);
    expect(parseSendRequest({ to, type: 'location', location: { latitude: '-90', longitude: '180.0' } }).location).toEqual({ latitude: '-90', longitude: '180.0' });
  });

  it('forwards template components as sent: no parameters added where none were given', () => {
    const components = [{ type: 'body' }, { type: 'button', sub_type: 'voice_call', index: '0' }];
    expect(parseSendRequest({ messaging_product: 'whatsapp', to, type: 'template', template: { name: 't', language: { code: 'en_US' }, components } }).template.components).toEqual(components);
  });

  it('takes a fractional ai.pauseDuration (minutes)', () => {
    expect(parseSendRequest({ to, content: 'hi', ai: { pause: true, pauseDuration: 2.5 } }).ai).toEqual({ pause: true, pauseDuration: 2.5 });
  });

  it('takes a product list of one section without a title (Meta: required only past one section)', () => {
    const interactive = { type: 'product_list', header: { type: 'text', text: 'H' }, body: { text: 'B' }, action: { catalog_id: '1', sections: [{ product_items: [{ product_retailer_id: 'a' }] }] } };
    expect(parseSendRequest({ messaging_product: 'whatsapp', to, type: 'interactive', interactive }).interactive).toEqual(interactive);
  });

  it('takes any single emoji as a reaction: plain, text-style, with a skin tone, a flag, a keycap, a ZWJ family, an escape', () => {
    for (const emoji of ['👍', '❤', '❤️', '👍🏽', '🇲🇽', '1️⃣', '👨‍👩‍👧‍👦', '\uD83D\uDE00']) {
      expect(parseSendRequest({ to, type: 'reaction', reaction: { message_id: 'wamid.x', emoji } }).reaction.emoji).toBe(emoji);
    }
  });

  it('accepts every limit at its edge', () => {
    expect(() => parseSendRequest({ to, type: 'image', image: { link: 'https://example.com/a.jpg', caption: long(1024) } })).not.toThrow();
    expect(() => parseSendRequest({ to, type: 'location', location: { latitude: -90, longitude: 180, name: long(1000), address: long(1000) } })).not.toThrow();
    expect(() => parseSendRequest({ to, type: 'reaction', reaction: { message_id: 'wamid.x', emoji: '' } })).not.toThrow();
    expect(() => parseSendRequest({ to, content: 'x', ai: { pause: true, pauseDuration: 1440 } })).not.toThrow();
    expect(parseSendRequest({ to, type: 'template', template: { name: 'r', language: { code: 'es_MX' }, components: [{ type: 'button', sub_type: 'quick_reply', index: 9 }] } }).template.components[0].index).toBe(9);
  });

  it("accepts the Cloud API's shape in upstream style: later interactive kinds, any button sub_type, digits-only recipients, a type implied by the message's member (as Meta's list-reply example)", () => {
    const upstream = { messaging_product: 'whatsapp', to: '5215512345678' };
    expect(parseSendRequest({ ...upstream, type: 'interactive', interactive: { type: 'call_permission_request', body: { text: 'May we call?' }, action: { name: 'call_permission_request' } } }).interactive.type).toBe('call_permission_request');
    expect(parseSendRequest({ ...upstream, interactive: { type: 'product', action: { catalog_id: '1', product_retailer_id: 'a' } } }).type).toBe('interactive');
    // netflie sends the catalog id as a number (faker's randomNumber); the Graph API takes it.
    expect(parseSendRequest({ ...upstream, interactive: { type: 'product', action: { catalog_id: 12345, product_retailer_id: 'a' } } }).type).toBe('interactive');
    expect(parseSendRequest({ ...upstream, interactive: { type: 'product_list', header: { type: 'text', text: 'H' }, body: { text: 'B' }, action: { catalog_id: 12345, sections: [{ product_items: [{ product_retailer_id: 'a' }] }] } } }).type).toBe('interactive');
    expect(() => parseSendRequest({ ...upstream, interactive: { type: 'product', action: { catalog_id: -1, product_retailer_id: 'a' } } })).toThrow(/catalog_id/);
    expect(parseSendRequest({ ...upstream, text: { body: 'hi' } }).type).toBe('text');
    expect(parseSendRequest({ ...upstream, type: 'text', text: { body: 'hi' } }).to).toBe('+5215512345678');
    expect(parseSendRequest({ ...upstream, to: 5215512345678, type: 'text', text: { body: 'hi' } }).to).toBe('+5215512345678');
    const button = (sub_type: string, parameters: unknown[]) => ({ ...upstream, type: 'template', template: { name: 't', language: { code: 'en_US' }, components: [{ type: 'button', sub_type, index: 0, parameters }] } });
    expect(() => parseSendRequest(button('copy_code', [{ type: 'coupon_code', coupon_code: 'SAVE10' }]))).not.toThrow();
    expect(() => parseSendRequest(button('mpm', [{ type: 'action', action: { thumbnail_product_retailer_id: 'x', sections: [] } }]))).not.toThrow();
    expect(() => parseSendRequest(button('voice_call', []))).not.toThrow();
    expect(() => parseSendRequest({ ...upstream, type: 'document', document: { link: 'https://example.com/a.pdf' } })).not.toThrow();
  });

  it.each([
    ['a coupon code over 15', { messaging_product: 'whatsapp', to, type: 'template', template: { name: 't', language: { code: 'en_US' }, components: [{ type: 'button', sub_type: 'copy_code', index: 0, parameters: [{ type: 'coupon_code', coupon_code: long(16) }] }] } }, 'template.components.0.parameters.0.coupon_code'],
    ['a product list over 30 products', { messaging_product: 'whatsapp', to, type: 'interactive', interactive: { type: 'product_list', header: { type: 'text', text: 'H' }, body: { text: 'B' }, action: { catalog_id: '1', sections: [{ title: 'S', product_items: Array.from({ length: 31 }, (_, i) => ({ product_retailer_id: `p${i}` })) }] } } }, 'interactive.action'],
    ['an order_details without its reference', { messaging_product: 'whatsapp', to, type: 'interactive', interactive: { type: 'order_details', body: { text: 'Pay' }, action: { name: 'review_and_pay', parameters: { type: 'digital-goods' } } } }, 'interactive.action.parameters'],
    ['product list sections without titles when there are two', { messaging_product: 'whatsapp', to, type: 'interactive', interactive: { type: 'product_list', header: { type: 'text', text: 'H' }, body: { text: 'B' }, action: { catalog_id: '1', sections: [{ title: 'S', product_items: [{ product_retailer_id: 'a' }] }, { product_items: [{ product_retailer_id: 'b' }] }] } } }, 'interactive.action'],
    ['an interactive kind that is not a word', { messaging_product: 'whatsapp', to, type: 'interactive', interactive: { type: 'Not A Kind', body: { text: 'x' } } }, 'interactive.type'],
    ['a digits-only recipient in service style', { to: '5215512345678', content: 'hi' }, 'to'],
    ['six contact cards (Meta: at most 5)', { ...upstream, type: 'contacts', contacts: Array.from({ length: 6 }, () => ({ name: { formatted_name: 'n' } })) }, 'contacts'],
    ['list sections without titles when there are two', { ...upstream, type: 'interactive', interactive: { type: 'list', body: { text: 'b' }, action: { button: 'b', sections: [{ rows: [{ id: 'r', title: 't' }] }, { rows: [{ id: 'r2', title: 't' }] }] } } }, 'interactive.action'],
    ['a header sub_text over 60', { ...upstream, type: 'interactive', interactive: { type: 'button', header: { type: 'text', text: 'h', sub_text: long(61) }, body: { text: 'b' }, action: replyAction } }, 'interactive.header.sub_text'],
    ['a header on a single product', { ...upstream, type: 'interactive', interactive: { type: 'product', header: { type: 'text', text: 'h' }, body: { text: 'b' }, action: { catalog_id: '1', product_retailer_id: 'p' } } }, 'interactive.header'],
    ['an empty flow data object', { ...upstream, type: 'interactive', interactive: { type: 'flow', body: { text: 'b' }, action: { name: 'flow', parameters: { flow_message_version: '3', flow_id: '1', flow_cta: 'Go', flow_action: 'navigate', flow_action_payload: { screen: 'A', data: {} } } } } }, 'interactive.action.parameters.flow_action_payload.data'],
    ['a carousel card that is null', carousel([null, card(1)]), 'interactive.action.cards.0'],
    ['a carousel of one card', carousel([card(0)]), 'interactive.action.cards'],
    ['a carousel of eleven cards', carousel(Array.from({ length: 11 }, (_, i) => card(i % 10))), 'interactive.action.cards'],
    ['a carousel card without a header', carousel([card(0), { ...card(1), header: undefined }]), 'interactive.action.cards.1.header'],
    ['a template carousel card that is null', templateCarousel([null]), 'template.components.1.cards.0'],
    ['a template carousel without cards', templateCarousel([]), 'template.components.1.cards'],
    ['a template carousel card header link that is not http(s)', templateCarousel([templateCard(0), templateCard(1, 'ftp://x/y.png')]), 'template.components.1.cards.1.components.0.parameters.0.image.link'],
  ])('rejects %s naming the field', (_label, body, field) => {
    expect(Object.keys(detailsOf(body))).toContain(field);
  });

  it("takes Meta's carousels (interactive 2-10 cards, template cards checked as its components) and a header sub_text of 60, forwarded as sent", () => {
    expect(parseSendRequest(carousel([card(0), card(1)])).interactive.action.cards).toEqual([card(0), card(1)]);
    expect(parseSendRequest(templateCarousel([templateCard(0), templateCard(1)])).template.components[1].cards).toEqual([templateCard(0), templateCard(1)]);
    expect(() => parseSendRequest({ ...upstream, type: 'interactive', interactive: { type: 'button', header: { type: 'text', text: 'h', sub_text: long(60) }, body: { text: 'b' }, action: replyAction } })).not.toThrow();
    expect(() => parseSendRequest({ ...upstream, type: 'contacts', contacts: Array.from({ length: 5 }, () => ({ name: { formatted_name: 'n' } })) })).not.toThrow();
  });

  it('refuses a message over 64 KB with 413 before looking at its fields', () => {
    const big = { messaging_product: 'whatsapp', to, type: 'location', location: { latitude: 0, longitude: 0, extra: long(65 * 1024) } };
    expect(() => parseSendRequest(big)).toThrow(expect.objectContaining({ status: 413, body: expect.objectContaining({ error: 'payload_too_large' }) }));
  });

  it('refuses invented members, items and depth past the shape bound (inside 64 KB), naming where', () => {
    const card = (phone: unknown) => ({ messaging_product: 'whatsapp', to, type: 'contacts', contacts: [{ name: { formatted_name: 'Ana' }, phones: [phone] }] });
    const wide = Object.fromEntries(Array.from({ length: MAX_MEMBERS + 1 }, (_, i) => [`k${i}`, i]));
    expect(detailsOf(card(wide))).toEqual({ 'contacts[0].phones[0]': [`contacts[0].phones[0] has ${MAX_MEMBERS + 1} members (at most ${MAX_MEMBERS})`] });
    const long = { messaging_product: 'whatsapp', to, type: 'location', location: { latitude: 0, longitude: 0, extra: Array.from({ length: MAX_ITEMS + 1 }, () => 1) } };
    expect(detailsOf(long)).toEqual({ 'location.extra': [`location.extra has ${MAX_ITEMS + 1} items (at most ${MAX_ITEMS})`] });
    let deep: unknown = 'bottom';
    for (let i = 0; i < MAX_DEPTH; i++) deep = { a: deep };
    expect(Object.values(detailsOf({ messaging_product: 'whatsapp', to, type: 'location', location: { latitude: 0, longitude: 0, extra: deep } }))).toEqual([[expect.stringContaining(`nested deeper than ${MAX_DEPTH} levels`)]]);
    // At the bound itself a Cloud API shape goes through.
    const widest = Object.fromEntries(Array.from({ length: MAX_MEMBERS - 1 }, (_, i) => [`k${i}`, i]));
    expect(parseSendRequest(card({ phone: '+5215500000001', ...widest })).type).toBe('contacts');
  });
});
