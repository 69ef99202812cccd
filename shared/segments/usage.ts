/**
 * Where a segment is used. A broadcast that targets a segment writes a usage item with its own create
 * (`segmentUsageItem`, under `pk B#{bid}#SEGUSE#{segmentId} sk broadcast#{id}`), and `GET /segments/{id}/usage`
 * lists those items as `campaigns`.
 *
 * The contract's usage response also has `agents`. The AI agent of this service answers every conversation of
 * its business and cannot be pointed at a segment, so no agent ever uses one: `agents` is always empty.
 */
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { queryAll } from '#shared/store/query.ts';

export interface SegmentUsage {
  id: string;
  name: string | null;
  status: string | null;
  usedAt: string;
}

/** The usage item of a broadcast that targets the segment (written in the broadcast's create transaction). */
export const segmentUsageItem = (bid: string, segmentId: string, broadcast: { id: string; name: string; status: string; createdAt: string }) => ({
  TableName: table(),
  Item: {
    ...keys.segmentUsage(bid, segmentId, 'broadcast', broadcast.id),
    type: 'segmentUsage', kind: 'broadcast', refId: broadcast.id, name: broadcast.name, status: broadcast.status, usedAt: broadcast.createdAt,
  },
});

export async function listSegmentUsage(bid: string, segmentId: string): Promise<{ campaigns: SegmentUsage[]; agents: SegmentUsage[] }> {
  const items = await queryAll<Record<string, any>>({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.segmentUsagePk(bid, segmentId) } });
  const campaigns = items.map((item) => ({ id: String(item.refId), name: item.name ?? null, status: item.status ?? null, usedAt: String(item.usedAt) }));
  return { campaigns, agents: [] };
}
