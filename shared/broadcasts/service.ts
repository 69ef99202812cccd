/**
 * The rules of broadcasts as the API sees them: create (validate, store, schedule or start), read, list,
 * recipients, cancel. Sending itself is the worker's (runner.ts).
 */
import { missingRecord } from '#shared/auth/ownership.ts';
import { randomUUID } from 'node:crypto';
import { ApiError, conflict, notFound, validationError, type FieldErrors } from '#shared/http/errors.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { loadSendSchemas } from '#shared/messages/schemas-loader.ts';
import { getBusiness } from '#shared/business/repository.ts';
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import { getSegment } from '#shared/segments/repository.ts';
import { commit } from '#shared/events/outbox.ts';
import { enqueue, queueUrl } from '#shared/queue/queue.ts';
import { keys } from '#shared/store/keys.ts';
import { claimSlots } from '#shared/store/slots.ts';
import { cancellationCodes } from '#shared/store/transact.ts';
import { table } from '#shared/store/client.ts';
import {
  broadcastCreateItems, getBroadcast, listBroadcasts, placePool, places, releaseScheduled, transitionInput, updateUsageStatus, type Places,
} from './repository.ts';
import { listRecipients } from './recipients.ts';
import { cancelStart, scheduleStart } from './scheduler.ts';
import { failBroadcast, isConditionFailure } from './completion.ts';
import { broadcastCancelled } from './events.ts';
import { logger } from '#shared/log/logger.ts';
import { broadcastSettings } from './settings.ts';
import { unknownPlaceholders } from './personalize.ts';
import { broadcastView, recipientView, type Broadcast, type RecipientStatus, type TemplateRequest } from './model.ts';
import type { CreateBroadcastInput } from './schemas.ts';
import type { BroadcastMessage } from './messages.ts';
import { parseIso } from '#shared/lang/iso-date.ts';

const TEMPLATE_FIELDS = ['templateName', 'template_parameters', 'language', 'header_media', 'allowButtonIdOverride', 'template'] as const;
/** Stands in for the recipient while the template is validated like a send. */
const PLACEHOLDER_TO = '+10000000000';

async function templateOf(input: CreateBroadcastInput): Promise<TemplateRequest> {
  const raw: Record<string, unknown> = { type: 'template' };
  for (const f of TEMPLATE_FIELDS) if (input[f] !== undefined) raw[f] = input[f];
  if (raw.templateName === undefined && raw.template === undefined) {
    throw validationError({ templateName: ['a template is required: templateName (shortcut) or a template object'] }, 'A broadcast needs a template');
  }
  const { to: _to, ...parsed } = (await loadSendSchemas()).parseSendRequest({ ...raw, to: PLACEHOLDER_TO });
  return parsed as TemplateRequest;
}

const templates = onFirstUse(() => import('#shared/templates/prepare.ts'));

/**
 * The checks a send runs on its template against the business's approved one (body placeholder count, the media
 * header), before anything is stored: a broadcast that could only fail at its first recipient is refused at once,
 * as POST /messages/v1 refuses the message (400 `invalid_template_parameters`). A business without a messaging account
 * yet is checked when the broadcast runs.
 */
async function checkTemplate(businessId: string, template: TemplateRequest): Promise<void> {
  const unknown = unknownPlaceholders(template);
  if (unknown.length > 0) {
    throw validationError({ template: [`placeholders that name no contact field or do not close: ${unknown.join(', ')}`] },
      `Unknown placeholders ${unknown.join(', ')}: use {{contact.name}}, {{contact.first_name}}, {{contact.phone_number}}, {{contact.email}}, {{contact.id}} or {{custom_fields.<name>}}, with an optional |fallback`);
  }
  const business = await getBusiness(businessId);
  if (!business?.phoneNumberId) return;
  await (await templates()).prepareTemplate({ businessId, phoneNumberId: business.phoneNumberId, wabaId: business.wabaId }, template as Record<string, any>);
}

function audienceOf(input: CreateBroadcastInput): { segmentId?: string; contactIds?: string[] } {
  // Exactly one of the four places: a second one would be silently ignored.
  const given = [input.segment_id, input.contact_ids, input.audience?.segment_id, input.audience?.contact_ids].filter((x) => x !== undefined);
  const segmentId = input.segment_id ?? input.audience?.segment_id;
  const contactIds = input.contact_ids ?? input.audience?.contact_ids;
  if (given.length !== 1) {
    throw validationError({ audience: ['give exactly one audience: segment_id or contact_ids'] }, 'A broadcast needs exactly one audience: segment_id or contact_ids');
  }
  return segmentId ? { segmentId } : { contactIds: [...new Set(contactIds)] };
}

function sendAtOf(input: CreateBroadcastInput, nowMs: number): string | null {
  if (input.send_at === undefined || input.send_at === null) return null;
  const errors: FieldErrors = {};
  // ISO 8601 date-time with a time zone (Z or an offset), so that the moment is unambiguous; a day or hour the calendar
  // does not have (November 31, 24:00) is refused.
  const parsed = parseIso(input.send_at);
  const at = parsed?.ms ?? NaN;
  if (!parsed?.time || !parsed.zone) errors.send_at = ['send_at must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T15:00:00Z'];
  else if (at <= nowMs) errors.send_at = ['send_at must be in the future'];
  else if (at > nowMs + broadcastSettings.maxScheduleDays * 86_400_000) errors.send_at = [`send_at must be at most ${broadcastSettings.maxScheduleDays} days ahead`];
  if (errors.send_at) throw validationError(errors, errors.send_at[0]);
  return new Date(at).toISOString();
}

export async function createBroadcast(businessId: string, input: CreateBroadcastInput) {
  const nowMs = Date.now();
  const template = await templateOf(input);
  const { segmentId, contactIds } = audienceOf(input);
  const sendAt = sendAtOf(input, nowMs);
  await checkTemplate(businessId, template);
  let audience: Broadcast['audience'];
  if (segmentId) {
    const segment = await getSegment(businessId, segmentId);
    if (!segment) throw validationError({ segment_id: ['segment not found'] }, 'The segment does not exist in this business');
    audience = { type: 'segment', segment_id: segmentId, segment_type: segment.segmentType };
  } else {
    audience = { type: 'contacts', contact_count: contactIds!.length };
  }
  const now = new Date(nowMs).toISOString();
  const b: Broadcast = {
    id: randomUUID(),
    businessId,
    name: input.name,
    status: sendAt ? 'scheduled' : 'running',
    template,
    audience,
    send_at: sendAt,
    created_at: now,
    updated_at: now,
    started_at: null,
    completed_at: null,
    cancelled_at: null,
    failed_at: null,
    error: null,
    pace_per_minute: broadcastSettings.pacePerMinute,
    counts: { total: 0, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, cancelled: 0 },
  };
  if (sendAt) {
    // Schedule before storing: a schedule that fires for a broadcast that was never stored does nothing.
    await scheduleStart(businessId, b.id, new Date(sendAt));
    await storeInPlace(b, contactIds).catch(async (err) => {
      await cancelStart(b.id);
      throw err;
    });
    return broadcastView(b);
  }
  // An immediate start is queued after storing (the start step reads the broadcast): check its queue's setting first,
  // so that a deployment without it stores nothing.
  queueUrl('broadcasts');
  await storeInPlace(b, contactIds);
  await queueStart(b);
  return broadcastView(b);
}

/** Places a create tries before it answers 409 (each lost to a concurrent create is skipped by the next try). */
const PLACE_TRIES = 8;

const POOLS = {
  scheduled: { max: broadcastSettings.maxScheduled, full: (max: number) => `A business may have at most ${max} broadcasts with a send_at that have not finished; cancel one, or wait for one to finish` },
  immediate: { max: broadcastSettings.maxRunning, full: (max: number) => `A business may have at most ${max} broadcasts running at once; cancel one, or wait for one to finish` },
} as const;

/**
 * Stores a broadcast in one of the business's places for unfinished broadcasts of its kind (scheduled or started at
 * once: shared/store/slots.ts), claimed in the same transaction, so that the cap holds under concurrent creates.
 */
async function storeInPlace(b: Broadcast, contactIds: string[] | undefined): Promise<void> {
  const pool = placePool(b);
  const { max, full } = POOLS[pool];
  const slot = await claimSlots({
    kinds: [{ max, held: (read: Places) => read.held }],
    read: async () => {
      const read = await places(b.businessId, pool, max);
      if (read.held.length >= max) throw new ApiError(400, { error: 'broadcast_limit_reached', message: full(max) });
      return read;
    },
    store: async (read, [slot]) => {
      try {
        await commit(broadcastCreateItems({ ...b, ...(pool === 'scheduled' ? { schedule_slot: slot } : {}) }, contactIds, { slot, previous: read.finished.get(slot) }));
        return slot;
      } catch (err) {
        // The place went to a concurrent create (its condition is the transaction's only one that can fail): try another.
        if (!cancellationCodes(err)?.includes('ConditionalCheckFailed')) throw err;
        return undefined;
      }
    },
    tries: PLACE_TRIES,
    exhausted: () => conflict('broadcast_create_conflict', 'Concurrent creates took the free places for broadcasts; retry the request'),
  });
  if (pool === 'scheduled') b.schedule_slot = slot;
}

/**
 * Queues the start of a stored, running broadcast. When the message cannot be sent, the broadcast is committed
 * `failed` (nothing went out) and the request answers 503 naming it: it never stays `running` with no run to
 * move it.
 */
async function queueStart(b: Broadcast): Promise<void> {
  try {
    await enqueue('broadcasts', { type: 'start', businessId: b.businessId, broadcastId: b.id } satisfies BroadcastMessage);
  } catch (err) {
    logger.error('broadcast start could not be queued', { broadcastId: b.id, error: err as Error });
    const message = 'The broadcast could not be queued to start; nothing was sent. Create it again.';
    await failBroadcast(b, { error: 'start_failed', message });
    throw new ApiError(503, { error: 'service_unavailable', message, broadcast_id: b.id });
  }
}

async function mustGet(businessId: string, id: string): Promise<Broadcast> {
  const b = await getBroadcast(businessId, id);
  // Another business's broadcast is 403, as every resource of another account but a segment (the contract).
  if (!b) throw await missingRecord('broadcast', id, businessId, notFound('Broadcast not found'));
  return b;
}

export const getBroadcastView = async (businessId: string, id: string) => broadcastView(await mustGet(businessId, id));

export async function listBroadcastViews(businessId: string, q: { limit: number; cursor?: string; status?: string }) {
  const { pk, skPrefix } = keys.broadcastPrefix(businessId);
  const start = decodeCursor(q.cursor, { pk, sk: { prefix: skPrefix }, gsi1pk: keys.broadcastsByRecencyPk(businessId), gsi1sk: { prefix: '' } });
  const { items, lastKey } = await listBroadcasts(businessId, q.limit, start, q.status);
  return { data: items.map(broadcastView), next_cursor: encodeCursor(lastKey) };
}

/** Each status lists the recipients its count counts: sent, delivered and read are reached, not current (a read one was sent and delivered). */
const RECIPIENT_FILTERS: Record<RecipientStatus, { expression: string; values: Record<string, unknown> }> = {
  pending: { expression: '#state IN (:a, :b)', values: { ':a': 'pending', ':b': 'sending' } },
  sent: { expression: '#state = :a', values: { ':a': 'sent' } },
  delivered: { expression: '#state = :a AND delivery_status IN (:b, :c)', values: { ':a': 'sent', ':b': 'delivered', ':c': 'read' } },
  read: { expression: '#state = :a AND delivery_status = :b', values: { ':a': 'sent', ':b': 'read' } },
  failed: { expression: '#state = :a', values: { ':a': 'failed' } },
  skipped: { expression: '#state = :a', values: { ':a': 'skipped' } },
  cancelled: { expression: '#state = :a', values: { ':a': 'cancelled' } },
};

export async function listRecipientViews(businessId: string, id: string, q: { limit: number; cursor?: string; status?: RecipientStatus; outcome?: RecipientStatus }) {
  const b = await mustGet(businessId, id);
  const start = decodeCursor(q.cursor, { pk: keys.broadcastRecipientsPk(businessId, id), sk: { prefix: keys.broadcastRecipientSkPrefix } });
  // Until its start commits, a broadcast's audience is still being frozen and its counts are all 0: its recipients
  // are listed from then on, so the list never shows what the counts do not count yet.
  if (!b.started_at && (b.status === 'scheduled' || b.status === 'running')) return { data: [], next_cursor: null };
  const status = q.status ?? q.outcome;
  const { items, lastKey } = await listRecipients(businessId, id, q.limit, start, status ? RECIPIENT_FILTERS[status] : undefined);
  return { data: items.map(recipientView), next_cursor: encodeCursor(lastKey) };
}

/** Tries to cancel once, as `current` was read; false when it changed meanwhile (started, or ended). */
async function cancelAsRead(current: Broadcast, cancelledAt: string): Promise<boolean> {
  const { businessId, id } = current;
  // One that has not started sending ends here, with its end event (status and event in one transaction). One that
  // has ends when its run has stopped and marked the rest cancelled, and its end event then has the final counts.
  const started = current.started_at !== null;
  try {
    await commit(
      [
        { Update: transitionInput(businessId, id, [current.status], 'cancelled', { cancelled_at: cancelledAt }, started ? undefined : '(attribute_not_exists(started_at) OR attribute_type(started_at, :nullType))', started ? {} : { ':nullType': 'NULL' }) },
        // From this commit on, no send of the broadcast records, so none goes upstream (sender.ts).
        { Put: { TableName: table(), Item: { ...keys.broadcastStop(businessId, id), type: 'broadcastStop', at: cancelledAt } } },
      ],
      started ? [] : [broadcastCancelled(current, current.counts, cancelledAt)],
    );
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

export async function cancelBroadcast(businessId: string, id: string) {
  let current = await mustGet(businessId, id);
  const cancelledAt = new Date().toISOString();
  for (;;) {
    if (current.status !== 'scheduled' && current.status !== 'running') {
      throw new ApiError(400, { error: 'invalid_state', message: `A ${current.status} broadcast cannot be cancelled`, status: current.status });
    }
    if (await cancelAsRead(current, cancelledAt)) break;
    current = await mustGet(businessId, id);
  }
  const cancelled = await mustGet(businessId, id);
  // A running broadcast's sends stop at the cancel's commit: one not recorded by then is never sent (its stop marker),
  // only those already recorded go out; its worker sees the status within a second and marks the rest cancelled.
  if (current.status === 'scheduled') await Promise.all([cancelStart(id), releaseScheduled(current)]);
  await updateUsageStatus(cancelled, 'cancelled');
  return broadcastView(cancelled);
}
