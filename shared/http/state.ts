/** Per-request values the middlewares hand to the handler, keyed by the event object. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { AuthContext } from '#shared/auth/context.ts';

export interface RequestState {
  auth?: AuthContext;
  body?: unknown;
  /** Why the parsed body is unfit for any route (shared/lang/json-bounds.ts): answered in the route's own error shape. */
  bodyProblem?: string;
  rawBody?: Buffer;
  rateHeaders?: Record<string, string>;
  /**
   * The rate-limit decision, started by the rate-limit middleware and awaited by the endpoint beside the
   * handler's own first reads (rejects with the 429). Nothing the handler writes runs before it settles.
   */
  admission?: Promise<void>;
}

const states = new WeakMap<object, RequestState>();

export const state = (event: APIGatewayProxyEventV2): RequestState => {
  let s = states.get(event);
  if (!s) states.set(event, (s = {}));
  return s;
};
