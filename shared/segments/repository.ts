/**
 * Segment items in the table.
 *  - `pk B#{bid} sk SEG#{id}`: the segment (rules stored exactly as given, the last stored count).
 *  - `pk B#{bid}#SEG#{id} sk C#{contactId}`: one item per static member; added with attribute_not_exists
 *    and removed with attribute_exists, so a repeated request changes nothing and counts nothing.
 *  - `pk B#{bid}#SEGUSE#{id} sk {kind}#{refId}`: where the segment is used (usage.ts).
 *  - `pk B#{bid} sk SPLACE#{n}`: the place a segment holds (one of MAX_SEGMENTS), and `pk B#{bid} sk DSLOT#{n}`: the
 *    slot a dynamic segment holds besides (one of MAX_DYNAMIC_SEGMENTS); claimed with it and released with it, so both
 *    caps hold under concurrent creates. Segments made before them hold none.
 */
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { queryAll, queryPrefix } from '#shared/store/query.ts';
import { batchWriteAll } from '#shared/store/batch.ts';
import { isTransactionCancelled } from '#shared/store/transact.ts';

export type SegmentType = 'static' | 'dynamic';

export interface SegmentRecord {
  id: string;
  name: string;
  description: string | null;
  color: string | null;
  segmentType: SegmentType;
  /** As given by the client; null for static segments. */
  rules: unknown;
  rulesFormat: 'filters' | 'legacy' | null;
  /** The last count that was computed (shown with countStale when a live count cannot finish). */
  contactCount: number;
  countedAt: string | null;
  /** Dynamic: the key of its maintained counters (new with every rule change); null on segments made before them. */
  counterKey: string | null;
  /** Its place under the business's cap on segments; null on segments made before places. */
  place?: number | null;
  /** Dynamic: the slot it holds under the business's cap on dynamic segments; null on static segments and dynamic ones made before slots. */
  slot?: number | null;
  createdAt: string;
  updatedAt: string;
}

const FIELDS = ['id', 'name', 'description', 'color', 'segmentType', 'rules', 'rulesFormat', 'contactCount', 'countedAt', 'counterKey', 'place', 'slot', 'createdAt', 'updatedAt'] as const;

const toRecord = (item: Record<string, any>): SegmentRecord =>
  Object.fromEntries(FIELDS.map((f) => [f, item[f] ?? (f === 'contactCount' ? 0 : null)])) as unknown as SegmentRecord;

/**
 * Puts a new segment with the place and the slot it claims (`s.place`, `s.slot`, when set): false when another
 * segment took either meanwhile.
 */
export async function putSegment(bid: string, s: SegmentRecord): Promise<boolean> {
  const claim = (key: { pk: string; sk: string }, type: string) => ({ Put: { TableName: table(), Item: { ...key, type, segmentId: s.id }, ConditionExpression: 'attribute_not_exists(pk)' } });
  try {
    await db.send(new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: table(), Item: { ...keys.segment(bid, s.id), type: 'segment', businessId: bid, ...s }, ConditionExpression: 'attribute_not_exists(pk)' } },
        ...(isHeld(s.place) ? [claim(keys.segmentPlace(bid, s.place), 'segmentPlace')] : []),
        ...(isHeld(s.slot) ? [claim(keys.segmentSlot(bid, s.slot), 'segmentSlot')] : []),
      ],
    }));
    return true;
  } catch (err) {
    if (isTransactionCancelled(err)) return false;
    throw err;
  }
}

const isHeld = (n: number | null | undefined): n is number => n !== null && n !== undefined;

export async function getSegment(bid: string, id: string): Promise<SegmentRecord | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.segment(bid, id) }));
  return Item ? toRecord(Item) : undefined;
}

export async function listSegments(bid: string, consistent = false): Promise<SegmentRecord[]> {
  const { pk, skPrefix } = keys.segmentPrefix(bid);
  return (await queryPrefix(pk, skPrefix, consistent)).map(toRecord);
}

/** Sets the given fields of an existing segment; undefined when it no longer exists. */
export async function updateSegment(bid: string, id: string, fields: Partial<Omit<SegmentRecord, 'id' | 'segmentType' | 'createdAt'>>): Promise<SegmentRecord | undefined> {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = entries.map(([k, v], i) => {
    names[`#f${i}`] = k;
    values[`:v${i}`] = v;
    return `#f${i} = :v${i}`;
  });
  try {
    const { Attributes } = await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.segment(bid, id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }));
    return Attributes ? toRecord(Attributes) : undefined;
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/** Stores a freshly computed count; a segment deleted meanwhile is left deleted. */
export async function storeCount(bid: string, id: string, count: number, at: string): Promise<void> {
  await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.segment(bid, id),
    UpdateExpression: 'SET contactCount = :c, countedAt = :at',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':c': count, ':at': at },
  })));
}

/** Deletes the segment, and frees the place and the slot it holds; false when it did not exist. */
export async function deleteSegmentItem(bid: string, s: Pick<SegmentRecord, 'id' | 'place' | 'slot'>): Promise<boolean> {
  // Only an item this segment holds.
  const release = (key: { pk: string; sk: string }) => ({ Delete: { TableName: table(), Key: key, ConditionExpression: 'attribute_not_exists(pk) OR segmentId = :id', ExpressionAttributeValues: { ':id': s.id } } });
  try {
    await db.send(new TransactWriteCommand({
      TransactItems: [
        { Delete: { TableName: table(), Key: keys.segment(bid, s.id), ConditionExpression: 'attribute_exists(pk)' } },
        ...(isHeld(s.place) ? [release(keys.segmentPlace(bid, s.place))] : []),
        ...(isHeld(s.slot) ? [release(keys.segmentSlot(bid, s.slot))] : []),
      ],
    }));
    return true;
  } catch (err) {
    if (isTransactionCancelled(err)) return false;
    throw err;
  }
}

/** All keys under a partition, for bulk clean-up. */
const partitionKeys = (pk: string): Promise<{ pk: string; sk: string }[]> =>
  queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ProjectionExpression: 'pk, sk' });

/** Removes every item of a partition (the members of a deleted segment; contacts themselves are untouched). */
export async function deletePartition(pk: string): Promise<void> {
  await batchWriteAll((await partitionKeys(pk)).map((Key) => ({ DeleteRequest: { Key } })), { concurrency: 8 });
}

/** Contact ids of a static segment's member items (including members soft-deleted since). */
export async function listMemberIds(bid: string, segmentId: string): Promise<string[]> {
  return (await partitionKeys(keys.segmentMembersPk(bid, segmentId))).map((k) => k.sk.slice(keys.segmentMemberSkPrefix.length));
}

/** Adds one member; false when it already was one (nothing changed). */
export async function addMember(bid: string, segmentId: string, contactId: string, at: string): Promise<boolean> {
  return applied(db.send(new PutCommand({
    TableName: table(),
    Item: { ...keys.segmentMember(bid, segmentId, contactId), type: 'segmentMember', contactId, addedAt: at },
    ConditionExpression: 'attribute_not_exists(pk)',
  })));
}

/** Removes one member; false when it was not one (nothing changed). */
export async function removeMember(bid: string, segmentId: string, contactId: string): Promise<boolean> {
  return applied(db.send(new DeleteCommand({
    TableName: table(),
    Key: keys.segmentMember(bid, segmentId, contactId),
    ConditionExpression: 'attribute_exists(pk)',
  })));
}
