/**
 * Per-key rate limits, exact across every Lambda instance: one conditional atomic counter per key,
 * limit class and minute window (ADD with `count < limit`), expired by TTL. A refused request does not
 * count. Every response of a limited class carries the X-RateLimit-* headers and Retry-After.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config, type LimitClass } from '#shared/config.ts';
import { db, table } from '#shared/store/client.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { ApiError } from '../errors.ts';
import { state, type RequestState } from '../state.ts';

const WINDOW_SECONDS = 60;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetEpochSeconds: number;
}

export async function consume(keyId: string, limitClass: LimitClass, now = Date.now()): Promise<RateDecision> {
  const limit = config.limits[limitClass];
  const windowStart = Math.floor(now / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  const reset = windowStart + WINDOW_SECONDS;
  try {
    const { Attributes } = await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.rateWindow(keyId, limitClass, windowStart),
      UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
      ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
      ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':ttl': reset + WINDOW_SECONDS },
      ReturnValues: 'UPDATED_NEW',
    }));
    const count = Number(Attributes?.count ?? 1);
    return { allowed: true, limit, remaining: Math.max(0, limit - count), resetEpochSeconds: reset };
  } catch (err) {
    if (isConditionFailure(err)) {
      return { allowed: false, limit, remaining: 0, resetEpochSeconds: reset };
    }
    throw err;
  }
}

/** Seconds until the decision's window resets (at least 1): when a refused request may be made again. */
const secondsToReset = (d: RateDecision, now = Date.now()): number => Math.max(1, d.resetEpochSeconds - Math.floor(now / 1000));

/**
 * The headers of every response of a limited class, as decisions.md lists them for the 429: `Retry-After` (seconds
 * until the window resets) on the others too, so that a client can pace itself on any answer.
 */
export const rateHeaders = (d: RateDecision): Record<string, string> => ({
  'Retry-After': String(secondsToReset(d)),
  'X-RateLimit-Limit': String(d.limit),
  'X-RateLimit-Remaining': String(d.remaining),
  'X-RateLimit-Reset': String(d.resetEpochSeconds),
});

/** The key's own limit; a refused request does not count. */
async function admit(s: RequestState, limitClass: LimitClass): Promise<void> {
  const decision = await consume(s.auth!.keyId, limitClass);
  s.rateHeaders = rateHeaders(decision);
  if (!decision.allowed) {
    throw new ApiError(
      429,
      { error: 'rate_limited', message: `Rate limit of ${decision.limit} per minute exceeded for this API key`, retry_after: Number(s.rateHeaders['Retry-After']) },
      s.rateHeaders,
    );
  }
}

/**
 * Starts the decision and leaves it to the endpoint to await (beside the handler's first reads). Sends also count
 * against their business's per-minute budget, shared with broadcasts: the send path takes that unit in the
 * transaction that records the message (shared/messages/ordinary-budget.ts).
 */
export const rateLimitMiddleware = (limitClass: LimitClass): MiddlewareObj<APIGatewayProxyEventV2> => ({
  before: async (request) => {
    const s = state(request.event);
    if (!s.auth) return;
    s.admission = admit(s, limitClass);
    // Awaited by the endpoint (or its error mapper); until then a refusal is not an unhandled rejection.
    s.admission.catch(() => undefined);
  },
});
