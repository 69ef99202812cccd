/**
 * Interactive messages, with the limits of Meta's reference for each kind (titles, counts, required members).
 * A kind Meta adds later is forwarded as sent, within the size bound of the whole message (schemas.ts).
 */
import * as v from 'valibot';
import { byType, cardIndex, httpUrl, maxStr, nonEmpty, object, str } from './fields.ts';
import { mediaParam } from './objects.ts';

/** Meta's optional line under any header. */
const subText = v.optional(maxStr('header.sub_text', 60));
const textHeader = v.looseObject({ type: v.literal('text', 'this header must be text'), text: nonEmpty('header.text', 60), sub_text: subText });
const mediaHeader = (type: 'image' | 'video' | 'document') => v.looseObject({ type: v.literal(type), [type]: mediaParam(type), sub_text: subText });
const header = byType('header', { text: textHeader, image: mediaHeader('image'), video: mediaHeader('video'), document: mediaHeader('document') });
const body = v.looseObject({ text: nonEmpty('body.text', 1024) }, 'body.text is required');
const footer = v.optional(v.looseObject({ text: nonEmpty('footer.text', 60) }));

/** An `action` with a fixed `name` and Cloud-API-defined `parameters`. */
const namedAction = (name: string, parameters: v.GenericSchema = object('action.parameters')) =>
  v.looseObject({ name: v.literal(name, `action.name must be ${name}`), parameters });

const kind = (type: string, entries: v.ObjectEntries) => v.looseObject({ type: v.literal(type), ...entries });

const distinct = (values: string[]): boolean => new Set(values).size === values.length;

const replyButtons = v.looseObject({
  buttons: v.pipe(
    v.array(v.looseObject({ type: v.literal('reply', 'button type must be reply'), reply: v.looseObject({ id: nonEmpty('reply.id', 256), title: nonEmpty('reply.title', 20) }) })),
    v.minLength(1, 'action.buttons needs 1 to 3 buttons'),
    v.maxLength(3, 'action.buttons needs 1 to 3 buttons'),
    // Meta's reference: a reply button's id identifies it in the answer, and its title must be unique.
    v.check((buttons) => distinct(buttons.map((b) => b.reply.id)), 'each reply button needs an id of its own'),
    v.check((buttons) => distinct(buttons.map((b) => b.reply.title)), 'each reply button needs a title of its own'),
  ),
});

/** Meta's reference: a section's title is required when the message has more than one section (lists and product lists). */
const titledSections = <T extends { sections: { title?: string }[] }>() => v.check<T, string>(
  (a) => a.sections.length === 1 || a.sections.every((s) => s.title !== undefined),
  'each section needs a title when there is more than one',
);

const listAction = v.pipe(
  v.looseObject({
    button: nonEmpty('action.button', 20),
    sections: v.pipe(
      v.array(v.looseObject({
        title: v.optional(maxStr('section.title', 24)),
        rows: v.pipe(
          v.array(v.looseObject({ id: nonEmpty('row.id', 200), title: nonEmpty('row.title', 24), description: v.optional(maxStr('row.description', 72)) })),
          v.minLength(1, 'a section needs at least one row'),
        ),
      })),
      v.minLength(1, 'action.sections needs 1 to 10 sections'),
      v.maxLength(10, 'action.sections needs 1 to 10 sections'),
    ),
  }),
  titledSections(),
  v.check((a) => a.sections.reduce((n, s) => n + s.rows.length, 0) <= 10, 'a list has at most 10 rows in total'),
);

const flowParameters = v.pipe(
  v.looseObject({
    flow_message_version: v.optional(v.literal('3'), '3'),
    flow_cta: nonEmpty('flow_cta', 30),
    flow_id: v.optional(nonEmpty('flow_id')),
    flow_name: v.optional(nonEmpty('flow_name')),
    // pywa sends `null` for a flow without a token; it goes upstream as sent.
    flow_token: v.optional(v.nullable(v.string())),
    flow_action: v.optional(v.picklist(['navigate', 'data_exchange'])),
    flow_action_payload: v.optional(v.looseObject({
      // Meta's reference: the first screen's input, a non-empty object when given.
      data: v.optional(v.pipe(object('flow_action_payload.data'), v.check((d) => Object.keys(d).length > 0, 'flow_action_payload.data must be a non-empty object when given'))),
    }, 'flow_action_payload must be an object')),
    mode: v.optional(v.picklist(['draft', 'published'])),
  }),
  v.check((p) => (p.flow_id !== undefined) !== (p.flow_name !== undefined), 'a flow needs exactly one of flow_id or flow_name'),
);

/**
 * Meta's reference types a catalog id as a string; the Graph API takes the number too, and published clients
 * send one (netflie's product messages): forwarded as sent.
 */
const catalogId = v.union([nonEmpty('action.catalog_id', 100), v.pipe(v.number(), v.safeInteger(), v.minValue(0))], 'action.catalog_id must be a catalog id (a string or a whole number)');

const productItem = v.looseObject({ product_retailer_id: nonEmpty('product_retailer_id', 100) });
const productListAction = v.pipe(
  v.looseObject({
    catalog_id: catalogId,
    sections: v.pipe(
      v.array(v.looseObject({ title: v.optional(nonEmpty('section.title', 24)), product_items: v.pipe(v.array(productItem), v.minLength(1, 'a section needs at least one product')) })),
      v.minLength(1, 'action.sections needs 1 to 10 sections'),
      v.maxLength(10, 'action.sections needs 1 to 10 sections'),
    ),
  }),
  titledSections(),
  v.check((a) => a.sections.reduce((n, s) => n + s.product_items.length, 0) <= 30, 'a product list has at most 30 products in total'),
);

const orderParameters = (required: string[]) =>
  v.pipe(
    object('action.parameters'),
    v.check((p: Record<string, unknown>) => required.every((k) => p[k] !== undefined), `action.parameters needs ${required.join(', ')}`),
  );

/**
 * Meta's media carousel: a body and 2 to 10 cards, each with an image or video header, an optional body of at most 160
 * characters and its own action (one URL button or quick replies); no header or footer of its own.
 */
const carouselCard = v.looseObject({
  card_index: cardIndex,
  type: str('card.type'),
  header: byType('card.header', { image: mediaHeader('image'), video: mediaHeader('video') }),
  body: v.optional(v.looseObject({ text: nonEmpty('card.body.text', 160) })),
  action: object('card.action'),
}, 'each card must be an object');
const carouselAction = v.looseObject({
  cards: v.pipe(v.array(carouselCard, 'action.cards must be an array of cards'), v.minLength(2, 'action.cards needs 2 to 10 cards'), v.maxLength(10, 'action.cards needs 2 to 10 cards')),
});

const kinds: Record<string, v.GenericSchema> = {
  button: kind('button', { header: v.optional(header), body, footer, action: replyButtons }),
  list: kind('list', { header: v.optional(textHeader), body, footer, action: listAction }),
  cta_url: kind('cta_url', { header: v.optional(header), body, footer, action: namedAction('cta_url', v.looseObject({ display_text: nonEmpty('display_text', 20), url: httpUrl('url') })) }),
  flow: kind('flow', { header: v.optional(header), body, footer, action: namedAction('flow', flowParameters) }),
  product: kind('product', {
    header: v.optional(v.never('a product message has no header (Meta: it cannot be set for product)')),
    body: v.optional(body),
    footer,
    action: v.looseObject({ catalog_id: catalogId, product_retailer_id: nonEmpty('action.product_retailer_id', 100) }),
  }),
  product_list: kind('product_list', { header: textHeader, body, footer, action: productListAction }),
  catalog_message: kind('catalog_message', { body, footer, action: namedAction('catalog_message', v.optional(object('action.parameters'))) }),
  location_request_message: kind('location_request_message', { body, action: v.looseObject({ name: v.literal('send_location', 'action.name must be send_location') }) }),
  order_details: kind('order_details', {
    header: v.optional(header), body, footer,
    action: namedAction('review_and_pay', orderParameters(['reference_id', 'type', 'currency', 'total_amount', 'order'])),
  }),
  carousel: kind('carousel', {
    header: v.optional(v.never('a carousel has no header of its own (its cards have)')),
    body,
    footer: v.optional(v.never('a carousel has no footer')),
    action: carouselAction,
  }),
  order_status: kind('order_status', { body, footer, action: namedAction('review_order', orderParameters(['reference_id', 'order'])) }),
};

/** A kind this service does not know yet: Meta's common members, forwarded as sent. */
const laterKind = v.looseObject({
  type: v.pipe(str('interactive.type'), v.regex(/^[a-z_]{1,64}$/, 'interactive.type must be a Cloud API interactive kind')),
  header: v.optional(object('header')),
  body: v.optional(body),
  footer,
  action: v.optional(object('action')),
});

export const interactive = byType('interactive', kinds, laterKind);
