/**
 * Reads a business's contact projection: the SHARD_COUNT shards of index `shard` in parallel, only `ssk`
 * (newest first, then the contact id) and `proj`. A whole read serves counts of static segments, member
 * selection and contact search; `newestMatching` reads only as far as a page of matches, newest first, needs.
 * A deadline turns a slow read into a "could not finish" signal instead of a time-out of the whole function.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { QUERY_PAGE } from '#shared/store/query.ts';
import { keys } from '#shared/store/keys.ts';
import { SHARD_COUNT, decodeProjection, type ProjectedContact } from './projection.ts';
import type { Predicate } from './predicate.ts';

export class ScanDeadlineExceeded extends Error {
  constructor() {
    super('the contact projection could not be read within the time budget');
    this.name = 'ScanDeadlineExceeded';
  }
}

export interface ScanOptions {
  /** Epoch ms after which the scan gives up with ScanDeadlineExceeded. */
  deadline?: number;
  /** Called with every projected contact; return nothing. Avoids holding 100k objects when only counting. */
  onContact?: (c: ProjectedContact) => void;
}

const shardPage = (businessId: string, shard: number, start: Record<string, unknown> | undefined, limit = QUERY_PAGE) => db.send(new QueryCommand({
  TableName: table(),
  IndexName: 'shard',
  KeyConditionExpression: 'spk = :spk',
  ExpressionAttributeValues: { ':spk': keys.contactShardPk(businessId, shard) },
  ProjectionExpression: 'ssk, proj',
  ExclusiveStartKey: start,
  Limit: limit,
}));

/** Raw pages of one shard: [contactId, proj] pairs. Exported for the benchmark's read-only baseline. */
export async function readShard(businessId: string, shard: number, each: (id: string, proj: string) => void, deadline?: number): Promise<void> {
  let start: Record<string, unknown> | undefined;
  do {
    if (deadline !== undefined && Date.now() >= deadline) throw new ScanDeadlineExceeded();
    const page = await shardPage(businessId, shard, start);
    for (const item of page.Items ?? []) each(keys.contactShardId(item.ssk as string), item.proj as string);
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Every active contact of the business, decoded (order: unspecified). */
export async function scanProjection(businessId: string, opts: ScanOptions = {}): Promise<ProjectedContact[]> {
  const out: ProjectedContact[] = [];
  const sink = opts.onContact ?? ((c: ProjectedContact) => { out.push(c); });
  await Promise.all(Array.from({ length: SHARD_COUNT }, (_, shard) =>
    readShard(businessId, shard, (id, proj) => sink(decodeProjection(proj, id)), opts.deadline)));
  return out;
}

/** Newest first, then by id: a stable order for member lists, previews and contact search. */
export const byCreatedDesc = (a: ProjectedContact, b: ProjectedContact) =>
  (b.created ?? 0) - (a.created ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Ids of the active contacts matching `predicate`, newest first. */
export async function selectMatching(businessId: string, predicate: Predicate, opts: { deadline?: number } = {}): Promise<string[]> {
  const hits: ProjectedContact[] = [];
  await scanProjection(businessId, { deadline: opts.deadline, onContact: (c) => { if (predicate(c)) hits.push(c); } });
  return hits.sort(byCreatedDesc).map((c) => c.id);
}

/**
 * The first `count` active contacts matching `predicate`, newest first (byCreatedDesc), reading each shard only as
 * far as needed: rounds of one page per shard (pages growing while matches are few), until `count` matches lie at
 * or before the smallest key any unfinished shard has reached (everything up to it has been read everywhere).
 */
export async function newestMatching(businessId: string, predicate: Predicate, count: number, opts: { deadline?: number } = {}): Promise<ProjectedContact[]> {
  const shards = Array.from({ length: SHARD_COUNT }, (_, shard) => ({ shard, start: undefined as Record<string, unknown> | undefined, last: '', done: false }));
  const hits: { ssk: string; contact: ProjectedContact }[] = [];
  let limit = Math.max(50, Math.ceil((2 * count) / SHARD_COUNT));
  for (;;) {
    if (opts.deadline !== undefined && Date.now() >= opts.deadline) throw new ScanDeadlineExceeded();
    await Promise.all(shards.filter((s) => !s.done).map(async (s) => {
      const page = await shardPage(businessId, s.shard, s.start, limit);
      for (const item of page.Items ?? []) {
        const ssk = item.ssk as string;
        const contact = decodeProjection(item.proj as string, keys.contactShardId(ssk));
        if (predicate(contact)) hits.push({ ssk, contact });
        s.last = ssk;
      }
      s.start = page.LastEvaluatedKey;
      s.done = !s.start;
    }));
    const open = shards.filter((s) => !s.done).map((s) => s.last);
    const boundary = open.length > 0 ? open.reduce((a, b) => (a < b ? a : b)) : undefined;
    const settled = boundary === undefined ? hits : hits.filter((h) => h.ssk <= boundary);
    if (settled.length >= count || boundary === undefined) {
      return settled.sort((a, b) => (a.ssk < b.ssk ? -1 : a.ssk > b.ssk ? 1 : 0)).slice(0, count).map((h) => h.contact);
    }
    limit = Math.min(limit * 2, 2000);
  }
}
