import { eventSk, orderingKey } from '#shared/events/ordering.ts';
import { newEvent } from '#shared/events/outbox.ts';
import { deliveryId } from '#shared/webhooks/fanout.ts';
import { subscribes } from '#shared/webhooks/model.ts';
import { UUID_RE } from '#shared/http/schemas.ts';
import type { Subscription } from '#shared/webhooks/model.ts';

describe('ordering keys', () => {
  it('puts a contact\'s events, and the messages and conversations that name it, in one lane', () => {
    const k = 'contact:c1';
    expect(orderingKey({ event: 'contact.created', data: { contact_id: 'c1' } })).toBe(k);
    expect(orderingKey({ event: 'contact.stage_changed', data: { contact_id: 'c1', new_stage_id: 's' } })).toBe(k);
    expect(orderingKey({ event: 'contact.deleted', data: { id: 'c1' } })).toBe(k);
    expect(orderingKey({ event: 'message.sent', data: { id: 'm', contact_id: 'c1', conversation_id: 'v' } })).toBe(k);
    expect(orderingKey({ event: 'conversation.created', data: { contact: { id: 'c1' } } })).toBe(k);
  });

  it('falls back to the conversation, gives funnel events one lane, broadcasts their own', () => {
    expect(orderingKey({ event: 'message.read', data: { conversation_id: 'v' } })).toBe('conversation:v');
    expect(orderingKey({ event: 'funnel_stage.created', data: { stage_id: 's' } })).toBe('funnel');
    expect(orderingKey({ event: 'funnel_stages.reordered', data: {} })).toBe('funnel');
    expect(orderingKey({ event: 'broadcast.sent', data: { broadcast_id: 'b' } })).toBe('broadcast:b');
    expect(orderingKey({ event: 'message.received', data: { messages: [] } })).toBeUndefined();
  });
});

describe('commit order', () => {
  it('sorts the events of one millisecond (the several of one commit) in the order they were made', () => {
    // Prepare: 2,000 events in a tight loop, so that many share a millisecond.
    const made = Array.from({ length: 2000 }, (_, i) => newEvent('b1', i % 2 ? 'conversation.assigned' : 'conversation.created', { conversation_id: 'v', n: i }));

    // Act
    const sorted = [...made].sort((a, b) => (eventSk(a) < eventSk(b) ? -1 : 1));

    // Assess
    expect(new Set(made.map((e) => e.createdAt)).size).toBeLessThan(made.length);
    expect(sorted.map((e) => e.data.n)).toEqual(made.map((e) => e.data.n));
  });
});

describe('delivery ids and matching', () => {
  it('gives the same event and subscription the same UUID, and others different ones', () => {
    const at = '2026-11-21T10:00:00.000Z';
    expect(deliveryId('e1', 'w1', at)).toBe(deliveryId('e1', 'w1', at));
    expect(deliveryId('e1', 'w1', at)).not.toBe(deliveryId('e1', 'w2', at));
    expect(deliveryId('e2', 'w1', at)).not.toBe(deliveryId('e1', 'w1', at));
    expect(deliveryId('e1', 'w1', at)).toMatch(UUID_RE);
    expect(deliveryId('e1', 'w1', at)[14]).toBe('7');
    // Ids sort by event time, whatever the hash: the deliveries list reads them newest first from the table.
    expect(deliveryId('zz', 'w1', at) < deliveryId('aa', 'w1', '2026-11-21T10:00:00.001Z')).toBe(true);
  });

  it('matches by name or *, and never for a disabled subscription', () => {
    const s = (events: string[], enabled = true) => ({ events, enabled }) as Subscription;
    expect(subscribes(s(['*']), 'message.sent')).toBe(true);
    expect(subscribes(s(['message.sent']), 'message.sent')).toBe(true);
    expect(subscribes(s(['message.read']), 'message.sent')).toBe(false);
    expect(subscribes(s(['*'], false), 'message.sent')).toBe(false);
  });
});
