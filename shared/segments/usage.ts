/**
 * Where a segment is used. Areas that target a segment (broadcasts today, AI agent audiences later)
 * record it here, under `pk B#{bid}#SEGUSE#{segmentId} sk {kind}#{refId}`, and `GET /segments/{id}/usage`
 * lists those records: `{ data: { campaigns: [...], agents: [...] } }`.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { queryAll } from '#shared/store/query.ts';

/** `broadcast` usages are listed as campaigns; `agent` usages as AI agents. */
export type UsageKind = 'broadcast' | 'agent';

export interface SegmentUsage {
  id: string;
  name: string | null;
  status?: string | null;
  usedAt: string;
}

export async function recordSegmentUsage(bid: string, segmentId: string, kind: UsageKind, ref: { id: string; name?: string | null; status?: string | null }): Promise<void> {
  await db.send(new PutCommand({
    TableName: table(),
    Item: { ...keys.segmentUsage(bid, segmentId, kind, ref.id), type: 'segmentUsage', kind, refId: ref.id, name: ref.name ?? null, status: ref.status ?? null, usedAt: new Date().toISOString() },
  }));
}

export async function removeSegmentUsage(bid: string, segmentId: string, kind: UsageKind, refId: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: table(), Key: keys.segmentUsage(bid, segmentId, kind, refId) }));
}

export async function listSegmentUsage(bid: string, segmentId: string): Promise<{ campaigns: SegmentUsage[]; agents: SegmentUsage[] }> {
  const campaigns: SegmentUsage[] = [];
  const agents: SegmentUsage[] = [];
  const items = await queryAll<Record<string, any>>({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.segmentUsagePk(bid, segmentId) } });
  for (const item of items) {
    const sk = String(item.sk);
    const kind = String(item.kind ?? sk.slice(0, sk.indexOf('#')));
    const usage: SegmentUsage = {
      id: String(item.refId ?? sk.slice(sk.indexOf('#') + 1)),
      name: item.name ?? null,
      status: item.status ?? null,
      usedAt: item.usedAt ?? item.createdAt ?? null,
    };
    (kind === 'agent' ? agents : campaigns).push(usage);
  }
  return { campaigns, agents };
}
