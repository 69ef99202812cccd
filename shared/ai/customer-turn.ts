/**
 * Which inbound messages the AI agent is asked to answer: a customer's own turn in a 1:1 chat that can still be
 * answered. Not a reaction, an edit or a revoke of an earlier message, a system notice (a number change), a message
 * the upstream could not show (`unsupported`, `unknown`, `errors`, or one that came without its content, as Meta sends
 * an interactive reply it could not read: its errors beside the message), a group message (a 1:1 reply would go to the
 * wrong chat), or a message the customer sent longer ago than the 24-hour window (a redelivery, a backfill: a
 * free-form reply could no longer be delivered).
 */
import { WINDOW_MS } from '#shared/conversations/repository.ts';

const TURNS = new Set(['text', 'image', 'audio', 'video', 'document', 'sticker', 'location', 'contacts', 'interactive', 'button', 'order']);

export function isCustomerTurn(message: Record<string, unknown>, receivedAt: string, now = Date.now()): boolean {
  const type = String(message.type);
  if (!TURNS.has(type) || message[type] === undefined || message.group_id !== undefined || message.errors !== undefined) return false;
  return now - Date.parse(receivedAt) < WINDOW_MS;
}
