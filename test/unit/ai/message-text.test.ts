import { messageText } from '#shared/ai/conversation-history.ts';

describe('messageText (what the model reads of a message)', () => {
  it.each([
    ['a text', { messageType: 'text', content: { body: 'hola' }, payload: {} }, 'hola'],
    ['a text known only from the upstream payload', { messageType: 'text', content: null, payload: { text: { body: 'hola' } } }, 'hola'],
    ['an image with a caption', { messageType: 'image', content: { caption: 'my receipt' }, payload: {} }, '[image] my receipt'],
    ['a voice note', { messageType: 'audio', content: { id: 'm1' }, payload: {} }, '[audio]'],
    ['a template', { messageType: 'template', content: { name: 'order_update' }, payload: {} }, '[template order_update]'],
    ['a quick-reply button', { messageType: 'button', content: null, payload: { button: { text: 'Yes, confirm' } } }, 'Yes, confirm'],
    ['an interactive reply', { messageType: 'interactive', content: null, payload: { interactive: { button_reply: { id: 'b1', title: 'Track order' } } } }, 'Track order'],
    ['a location', { messageType: 'location', content: { latitude: 19.4, longitude: -99.1 }, payload: {} }, '[location 19.4,-99.1]'],
    ['something else', { messageType: 'reaction', content: { emoji: '👍' }, payload: {} }, '[reaction]'],
  ])('reads %s', (_label, message, expected) => {
    expect(messageText(message as any)).toBe(expected);
  });
});
