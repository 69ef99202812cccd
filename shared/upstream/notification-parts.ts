/**
 * A Cloud API notification too large for one queue message, cut into notifications of the same shape that are
 * each small enough. Meta's webhook payloads reach 3 MB; an SQS message holds 1 MiB. Each part is
 * `{ object, entry: [{ ...entry, changes: [change] }] }` with one change, and a change too large alone is cut
 * again by its `messages` and `statuses` (each part keeps the change's other members, and a part of messages
 * keeps the `contacts` entries of its own senders). The worker handles every part as it handles a whole body.
 * An item that exceeds the size alone cannot be queued in any shape: it is left out, and the caller is told.
 */

import { isObject } from '#shared/lang/is-object.ts';

export interface NotificationParts {
  parts: string[];
  /** Items (messages, statuses, changes) larger than a part may be. */
  leftOut: number;
}

const bytes = (x: unknown) => Buffer.byteLength(JSON.stringify(x));

/** The `contacts` entries of a change by the sender keys a message names them with (`from` → wa_id, `from_user_id` → user_id). */
function contactsBySender(contacts: Record<string, any>[]): (message: unknown) => Record<string, any>[] {
  const byKey = new Map<string, Record<string, any>[]>();
  const add = (key: string, c: Record<string, any>) => byKey.set(key, [...(byKey.get(key) ?? []), c]);
  for (const c of contacts) {
    if (c.wa_id !== undefined) add(`w:${String(c.wa_id)}`, c);
    if (c.user_id !== undefined) add(`u:${String(c.user_id)}`, c);
  }
  return (m) => (isObject(m) ? [...new Set([...(byKey.get(`w:${String(m.from)}`) ?? []), ...(byKey.get(`u:${String(m.from_user_id)}`) ?? [])])] : []);
}

export function notificationParts(payload: Record<string, any>, maxBytes: number): NotificationParts {
  const parts: string[] = [];
  let leftOut = 0;
  const wrap = (entry: Record<string, any>, change: unknown) => ({ ...payload, entry: [{ ...entry, changes: [change] }] });
  const push = (part: object) => {
    const text = JSON.stringify(part);
    if (Buffer.byteLength(text) <= maxBytes) parts.push(text);
    else leftOut++;
  };

  for (const entry of Array.isArray(payload.entry) ? payload.entry : []) {
    if (!isObject(entry)) continue;
    for (const change of Array.isArray(entry.changes) ? entry.changes : []) {
      const whole = wrap(entry, change);
      if (bytes(whole) <= maxBytes || !isObject(change) || !isObject(change.value)) {
        push(whole);
        continue;
      }
      const { messages, statuses, contacts, ...rest } = change.value;
      const sendersOf = contactsBySender(Array.isArray(contacts) ? contacts.filter(isObject) : []);
      const partOf = (member: 'messages' | 'statuses', items: unknown[], senders: Record<string, any>[]) => wrap(entry, {
        ...change,
        value: { ...rest, ...(member === 'messages' && contacts !== undefined ? { contacts: senders } : {}), [member]: items },
      });
      for (const member of ['messages', 'statuses'] as const) {
        const items: unknown[] = Array.isArray(change.value[member]) ? change.value[member] : [];
        // Greedy: as many items to a part as fit. The size is counted as the items are added (each item and its
        // sender's entry, with a comma): never less than the part's, so every part that is cut fits.
        const envelope = bytes(partOf(member, [], []));
        let group: unknown[] = [];
        let senders = new Set<Record<string, any>>();
        let size = envelope;
        // The contacts entries `item` brings to the part (its sender's, unless the part has it already), and their size with its own.
        const addition = (item: unknown) => {
          const own = member === 'messages' ? sendersOf(item).filter((c) => !senders.has(c)) : [];
          return { own, size: bytes(item) + 1 + own.reduce((n, c) => n + bytes(c) + 1, 0) };
        };
        for (const item of items) {
          let adds = addition(item);
          if (group.length > 0 && size + adds.size > maxBytes) {
            push(partOf(member, group, [...senders]));
            group = [];
            senders = new Set();
            size = envelope;
            adds = addition(item);
          }
          group.push(item);
          for (const c of adds.own) senders.add(c);
          size += adds.size;
        }
        if (group.length > 0) push(partOf(member, group, [...senders]));
      }
    }
  }
  return { parts, leftOut };
}
