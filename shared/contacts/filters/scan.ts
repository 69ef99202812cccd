/**
 * Reads a business's contact projection: all SHARD_COUNT shards of index `shard` in parallel, only
 * `ssk` (the contact id) and `proj`. This is the one read path of counts, member lists, previews,
 * member selection and contact search; a deadline turns a slow read into a "could not finish" signal
 * instead of a time-out of the whole function.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
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

/** Raw pages of one shard: [contactId, proj] pairs. Exported for the benchmark's read-only baseline. */
export async function readShard(businessId: string, shard: number, each: (id: string, proj: string) => void, deadline?: number): Promise<void> {
  let start: Record<string, unknown> | undefined;
  do {
    if (deadline !== undefined && Date.now() >= deadline) throw new ScanDeadlineExceeded();
    const page = await db.send(new QueryCommand({
      TableName: table(),
      IndexName: 'shard',
      KeyConditionExpression: 'spk = :spk',
      ExpressionAttributeValues: { ':spk': keys.contactShardPk(businessId, shard) },
      ProjectionExpression: 'ssk, proj',
      ExclusiveStartKey: start,
    }));
    for (const item of page.Items ?? []) each(item.ssk as string, item.proj as string);
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
