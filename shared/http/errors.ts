/**
 * The service's error values. Services throw these; one mapper (shared/http/endpoint.ts) turns them
 * into HTTP replies. Anything else that escapes a handler is a bug and becomes a logged 500.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
    /** What the error answers for, when another error caused it (an upstream refusal of a send). */
    cause?: unknown,
  ) {
    super(typeof body.message === 'string' ? body.message : String(body.error), cause === undefined ? undefined : { cause });
    this.name = 'ApiError';
  }
}

export type FieldErrors = Record<string, string[]>;

export const badRequest = (error: string, message: string, extra: Record<string, unknown> = {}) =>
  new ApiError(400, { error, message, ...extra });

export const validationError = (details: FieldErrors, message = 'The request is not valid') =>
  new ApiError(400, { error: 'validation_error', message, details });

export const invalidJson = (message = 'The request body is not valid JSON') =>
  new ApiError(400, { error: 'invalid_json', message });

/**
 * 401 with the challenge RFC 6750 asks of a bearer-token resource: `Bearer` when no credentials came,
 * `error="invalid_token"` when the key sent is not valid (unknown, malformed, revoked or expired).
 */
export const unauthorized = (message: string, problem: 'missing' | 'invalid_token' = 'invalid_token') =>
  new ApiError(401, { error: 'unauthorized', message }, { 'WWW-Authenticate': problem === 'missing' ? 'Bearer' : 'Bearer error="invalid_token"' });

export const forbidden = (message: string) => new ApiError(403, { error: 'forbidden', message });

export const notFound = (message = 'Resource not found', extra: Record<string, unknown> = {}) =>
  new ApiError(404, { error: 'not_found', message, ...extra });

export const conflict = (error: string, message: string, extra: Record<string, unknown> = {}) =>
  new ApiError(409, { error, message, ...extra });

export const methodNotAllowed = (allowed: string[]) =>
  new ApiError(405, { error: 'method_not_allowed', message: `Allowed methods: ${allowed.join(', ')}` }, { Allow: allowed.join(', ') });
