/**
 * API-key auth: `Authorization: Bearer wak_...`. The key item is read on every request (one GetItem),
 * so revocation takes effect on the next request.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { API_KEY_PATTERN, findApiKey } from '#shared/auth/api-keys.ts';
import type { Scope } from '#shared/auth/scopes.ts';
import type { AuthContext } from '#shared/auth/context.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { state } from '../state.ts';
import { logger } from '#shared/log/logger.ts';

export const authenticate = async (authorization: string | undefined): Promise<AuthContext> => {
  if (!authorization) throw unauthorized('Missing Authorization header; send "Authorization: Bearer <API_KEY>"', 'missing');
  // The scheme is case-insensitive (RFC 9110 §11.1).
  const match = /^Bearer +(\S+)$/i.exec(authorization.trim());
  // Another scheme (Basic, Token, a bare key) tried no bearer token: its challenge names no error (RFC 6750 §3.1).
  if (!match) throw unauthorized('Malformed Authorization header; expected "Bearer <API_KEY>"', /^Bearer\b/i.test(authorization.trim()) ? 'invalid_token' : 'missing');
  const apiKey = match[1];
  if (!API_KEY_PATTERN.test(apiKey)) throw unauthorized('Invalid API key format');
  const record = await findApiKey(apiKey);
  if (!record) throw unauthorized('Invalid API key');
  if (record.revoked) throw unauthorized('API key has been revoked');
  if (record.expiresAt && Date.parse(record.expiresAt) <= Date.now()) throw unauthorized('API key has expired');
  return { businessId: record.businessId, keyId: record.keyId, scopes: record.scopes };
};

/**
 * The Authorization header, or on a Cloud-API-compatible route without one, the `access_token` query parameter, as
 * Graph takes it (Chatwoot lists templates with it).
 */
const credentialsOf = (event: APIGatewayProxyEventV2, tokenInQuery: boolean): string | undefined => {
  const header = event.headers?.authorization;
  const token = event.queryStringParameters?.access_token;
  return header === undefined && tokenInQuery && token ? `Bearer ${token}` : header;
};

/** Who is calling: the key's business and scopes (401 without a valid key). */
export const authMiddleware = ({ tokenInQuery = false } = {}): MiddlewareObj<APIGatewayProxyEventV2> => ({
  before: async (request) => {
    const auth = await authenticate(credentialsOf(request.event, tokenInQuery));
    state(request.event).auth = auth;
    logger.appendKeys({ businessId: auth.businessId });
  },
});

/**
 * Whether the key may call the route (403 otherwise). It runs after the rate limit, so that a refusal for a scope is
 * an answer of the route's limited class too, with its X-RateLimit-* headers (decisions.md: on every response).
 */
export const scopeMiddleware = (scope: Scope): MiddlewareObj<APIGatewayProxyEventV2> => ({
  before: async (request) => {
    if (!state(request.event).auth!.scopes.includes(scope)) throw forbidden(`This API key lacks the required scope: ${scope}`);
  },
});
