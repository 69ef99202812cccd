/**
 * Sending what a run step claimed: each claimed recipient is sent its template and its outcome recorded under the
 * claim; upstream errors are classified as this recipient's failure, a throttle (back to the queue) or fatal (no
 * recipient gets past it: the broadcast fails).
 */
import { ApiError } from '#shared/http/errors.ts';
import { logger } from '#shared/log/logger.ts';
import { settleRecipient, type Outcome } from './recipients.ts';
import { addCounts } from './counts.ts';
import { BroadcastStopped, retryTemplate, sendTemplate } from './sender.ts';
import { unreachable } from './audience.ts';
import { getStoredContact } from '#shared/contacts/repository.ts';
import { getMessage } from '#shared/messages/repository.ts';
import type { Broadcast, BroadcastError, Recipient } from './model.ts';

/**
 * Test instrumentation: `afterSend` runs after a message went out and before its outcome is recorded; a throw
 * there is a worker dying at the worst moment.
 */
export const faults: { afterSend?: (r: Recipient) => void } = {};

/**
 * Upstream codes no recipient gets past: the template or the account is the problem. Not 131042 (payment): Meta
 * gives it per message, and the sandbox (decisions.md) for a recipient's number, so it fails that recipient.
 */
const FATAL_CODES = new Set(['132000', '132001', '132005', '132007', '132012', '132015', '132016', '131031', '190', '200', '10']);
const FATAL_ERRORS = new Set(['template_not_found', 'invalid_template_parameters', 'account_not_configured', 'messaging_not_configured']);
/** Throughput limits: the recipient goes back to the queue and the step ends. */
const THROTTLE_CODES = new Set(['130429', '131056', '80007', '4']);

/**
 * Sends in flight for one run. Sends are launched at the start of their second and not waited for, so the pace
 * does not depend on upstream latency; at most `capacity` are in flight, and a second whose sends cannot all
 * start at once reserves only what can, so sends never pile up behind the pace.
 */
export class Pipeline {
  inFlight = 0;
  fatal: BroadcastError | undefined;
  crash: unknown;
  throttled = false;
  private sent = 0;
  private failed = 0;
  private skipped = 0;
  private readonly running = new Set<Promise<void>>();

  constructor(readonly b: Broadcast, readonly capacity: number) {}

  /** Contacts this run is sending to right now (their claims are not abandoned, however long they take). */
  readonly mine = new Set<string>();

  launch(r: Recipient, lease: string): void {
    this.inFlight++;
    this.mine.add(r.contact_id);
    const p: Promise<void> = this.sendOne(r, lease)
      .catch((err) => {
        this.crash ??= err;
      })
      .finally(() => {
        this.inFlight--;
        this.mine.delete(r.contact_id);
        this.running.delete(p);
      });
    this.running.add(p);
  }

  async flushCounts(): Promise<void> {
    const delta = { sent: this.sent, failed: this.failed, skipped: this.skipped };
    this.sent = 0;
    this.failed = 0;
    this.skipped = 0;
    await addCounts(this.b.businessId, this.b.id, delta, { untilTallied: true });
  }

  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
    await this.flushCounts();
  }

  private async sendOne(r: Recipient, lease: string): Promise<void> {
    const { businessId, id } = this.b;
    if (this.fatal || this.crash) {
      await settleRecipient(businessId, id, r.contact_id, { state: 'pending' }, lease);
      return;
    }
    // The contact as it is at its turn: one deleted or opted out since the start is skipped (the send would make a new
    // contact of a deleted one's number), and one given another number is sent to that one.
    const contact = (await getStoredContact(businessId, r.contact_id))?.contact;
    const lapsed = unreachable(contact);
    if (lapsed) {
      if (await settleRecipient(businessId, id, r.contact_id, { state: 'skipped', reason: lapsed }, lease)) this.skipped++;
      return;
    }
    const to = contact!.phone_number!;
    // A throttled earlier turn left its message failed: that message goes again, unless it names the number the contact
    // has since left (then a new one goes to the new number).
    const again = r.message_id && to === r.phone_number ? r.message_id : undefined;
    let outcome: Outcome;
    try {
      const res = again ? await retryTemplate(businessId, id, again) : await sendTemplate(businessId, id, r, { ...r.request, to });
      faults.afterSend?.(r);
      outcome = { state: 'sent', message_id: res.messageId, wamid: res.wamid, phone_number: to };
    } catch (err) {
      if (err instanceof SimulatedCrash) throw err;
      // Cancelled before it was recorded: nothing went out; back to pending, where the run's sweep marks it cancelled.
      if (err instanceof BroadcastStopped) {
        await settleRecipient(businessId, id, r.contact_id, { state: 'pending' }, lease);
        return;
      }
      if (again && err instanceof ApiError && (err.body as { error?: unknown }).error === 'invalid_state') {
        await this.followRetriedMeanwhile(r, lease, again, to);
        return;
      }
      const classified = classify(err);
      if (classified.kind === 'throttled') {
        this.throttled = true;
        await settleRecipient(businessId, id, r.contact_id, { state: 'pending', message_id: classified.messageId ?? r.message_id, phone_number: to }, lease);
        return;
      }
      if (classified.kind === 'fatal') this.fatal ??= classified.error;
      outcome = { state: 'failed', message_id: classified.messageId ?? r.message_id, error: classified.error, phone_number: to };
    }
    if (await settleRecipient(businessId, id, r.contact_id, outcome, lease)) {
      if (outcome.state === 'sent') this.sent++;
      else this.failed++;
    }
  }

  /** The recipient's failed message is no longer failed: retried by hand meanwhile (sent: so is the recipient), or being retried. */
  private async followRetriedMeanwhile(r: Recipient, lease: string, messageId: string, to: string): Promise<void> {
    const { businessId, id } = this.b;
    const message = await getMessage(businessId, messageId);
    const went = message !== undefined && ['sent', 'delivered', 'read'].includes(message.status);
    const outcome: Outcome = went ? { state: 'sent', message_id: messageId, wamid: message.wamid ?? null, phone_number: to } : { state: 'pending', message_id: messageId };
    if (await settleRecipient(businessId, id, r.contact_id, outcome, lease) && went) this.sent++;
  }
}

export const OUTCOME_UNKNOWN: BroadcastError = {
  error: 'outcome_unknown',
  code: 'outcome_unknown',
  message: 'The worker sending this message stopped before its outcome was known; it is not sent again',
};

/** Thrown by test instrumentation to stand for a worker that dies. */
export class SimulatedCrash extends Error {}

type Classified =
  | { kind: 'fatal' | 'recipient'; error: BroadcastError; messageId: string | null }
  | { kind: 'throttled'; messageId: string | null };

function classify(err: unknown): Classified {
  if (err instanceof ApiError) {
    const body = err.body as Record<string, any>;
    const code = body.code === undefined || body.code === null ? undefined : String(body.code);
    const name = String(body.error ?? 'send_failed');
    const messageId = typeof body.data?.id === 'string' ? body.data.id : null;
    if (err.status === 429 || (code && THROTTLE_CODES.has(code))) return { kind: 'throttled', messageId };
    // The first attempt of a worker that died is still marked in progress: it may have gone out.
    if (name === 'idempotency_in_progress') return { kind: 'recipient', messageId: null, error: OUTCOME_UNKNOWN };
    const error: BroadcastError = { error: name, ...(code ? { code } : {}), message: String(body.message ?? name) };
    const fatal = (code && FATAL_CODES.has(code)) || FATAL_ERRORS.has(name.toLowerCase()) || code === 'MEDIA_PERMISSION_DENIED';
    return { kind: fatal ? 'fatal' : 'recipient', error, messageId };
  }
  logger.error('broadcast send failed unexpectedly', { error: err as Error });
  return { kind: 'recipient', messageId: null, error: { error: 'send_error', code: 'send_error', message: 'The message could not be sent' } };
}
