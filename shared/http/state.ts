/** Per-request values the middlewares hand to the handler, keyed by the event object. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { AuthContext } from '#shared/auth/context.ts';

export interface RequestState {
  auth?: AuthContext;
  body?: unknown;
  rawBody?: Buffer;
  rateHeaders?: Record<string, string>;
}

const states = new WeakMap<object, RequestState>();

export const state = (event: APIGatewayProxyEventV2): RequestState => {
  let s = states.get(event);
  if (!s) states.set(event, (s = {}));
  return s;
};
