/**
 * The Cloud-API-compatible routes speak the Graph API's language: paths under `/{version}/...` with a version
 * `vNN.N`, and error bodies `{ error: { message, type, code, error_data: { messaging_product, details }, fbtrace_id } }`
 * with the HTTP statuses and codes Meta uses. The service's own errors are translated here, in one place.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import * as v from 'valibot';
import { ApiError, notFound } from '#shared/http/errors.ts';
import { json, type Reply } from '#shared/http/reply.ts';
import { requirePhoneNumber } from '#shared/messages/send-route.ts';
import { getBusiness } from '#shared/business/repository.ts';
import { graphErrorBody } from './graph-error.ts';
import type { UpstreamError } from '#shared/upstream/client.ts';

export const GRAPH_VERSION = /^v\d+\.\d+$/;

/** A Graph error raised by a compatible route itself (already in Meta's terms). */
export class GraphError extends ApiError {
  constructor(status: number, code: number, message: string, details: string, type = 'OAuthException', subcode?: number) {
    super(status, { error: 'graph_error', message, graph: { code, type, details, ...(subcode !== undefined ? { subcode } : {}) } });
  }
}

/**
 * Meta's answer for an object the caller may not see, whether it is missing or another account's: HTTP 400,
 * `GraphMethodException` code 100, subcode 33, in Graph's own words.
 */
export const unknownObject = (id: string, method: string) =>
  new GraphError(400, 100, `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`, `No ${id} for this API key`, 'GraphMethodException', 33);

/**
 * The HTTP status of a Cloud API error code, as Meta's error-code reference lists it: 401 for the token (0, 190), 403 for
 * permissions (10, 200-299, 131005), 500 for 3 and 131000 ("something went wrong"), 503 for 2 and 131016 (service
 * unavailable), 400 for the rest (throttling 4, 80007, 130429 and 131056 included).
 */
function metaStatusOf(code: number): number {
  if (code === 0 || code === 190) return 401;
  if (code === 10 || (code >= 200 && code <= 299) || code === 131005) return 403;
  if (code === 3 || code === 131000) return 500;
  if (code === 2 || code === 131016) return 503;
  return 400;
}

/** Our error code → Meta's (HTTP status, Graph code, type). Upstream delivery codes (131047...) pass through. */
function graphTerms(status: number, body: Record<string, any>): { status: number; code: number; type: string; subcode?: number } {
  if (body.graph) return { status, code: body.graph.code, type: body.graph.type, subcode: body.graph.subcode };
  // An upstream error keeps Meta's code, with the HTTP status Meta's error-code reference gives it.
  const upstreamCode = typeof body.code === 'number' ? body.code : typeof body.code === 'string' && /^\d+$/.test(body.code) ? Number(body.code) : NaN;
  if (Number.isInteger(upstreamCode)) return { status: metaStatusOf(upstreamCode), code: upstreamCode, type: 'OAuthException' };
  // A media id the sending number cannot use is, to a Graph client, a parameter the upstream would refuse.
  if (body.code === 'MEDIA_PERMISSION_DENIED') return { status: 400, code: 100, type: 'OAuthException' };
  // A template's parameters that do not fit its placeholders: Meta's "Number of parameters does not match".
  if (body.error === 'invalid_template_parameters') return { status: 400, code: 132000, type: 'OAuthException' };
  // A repeat of a send still in flight under its Idempotency-Key (the service's own header): Graph's temporary
  // error, which Cloud API clients retry, and the retry answers with the send's outcome.
  if (body.error === 'idempotency_in_progress') return { status: 503, code: 2, type: 'OAuthException' };
  if (status === 401) return { status: 401, code: 190, type: 'OAuthException' };
  if (status === 403) return { status: 403, code: 10, type: 'OAuthException' };
  // Every object a Graph path cannot find (an id out of bounds too) is Meta's unknown object: see unknownObject.
  if (status === 404) return { status: 400, code: 100, type: 'GraphMethodException', subcode: 33 };
  if (status === 429) return { status: 429, code: 130429, type: 'OAuthException' };
  if (status === 413 && body.error === 'media_too_large') return { status: 400, code: 131053, type: 'OAuthException' };
  if (status === 503) return { status: 503, code: 2, type: 'OAuthException' };
  if (status >= 500) return { status: 500, code: 1, type: 'OAuthException' };
  return { status: 400, code: 100, type: 'OAuthException' };
}

const detailsOf = (body: Record<string, any>): string => {
  if (body.graph) return body.graph.details;
  if (body.details && typeof body.details === 'object' && !Array.isArray(body.details)) {
    return Object.entries(body.details as Record<string, unknown>).map(([k, m]) => `${k}: ${Array.isArray(m) ? m.join(', ') : JSON.stringify(m)}`).join('; ');
  }
  return String(body.instructions ?? body.action_required ?? body.message ?? body.error ?? '');
};

/** The upstream's refusal behind an error (raised by an upstream call, or a send's failure answering for one). */
const upstreamRefusalOf = (error: unknown): UpstreamError | undefined => {
  const candidate = error instanceof ApiError ? error.cause : error;
  return (candidate as UpstreamError | undefined)?.name === 'UpstreamError' ? (candidate as UpstreamError) : undefined;
};

/**
 * Any error reply of the service → the Graph error reply Meta would give. A refusal by the upstream itself (not a
 * fault the service retried) is Meta's own answer, passed on as it came: its HTTP status and its error object (message,
 * code, subcode, details, `is_transient`, `fbtrace_id`...), which Cloud API clients read.
 */
export function toGraphReply(reply: Reply, event: APIGatewayProxyEventV2, error?: unknown): Reply {
  if (!isGraphPath(event)) {
    const unknown = unknownRoute(event);
    return json(unknown.status, unknown.body, reply.headers);
  }
  const { 'content-type': _contentType, ...headers } = reply.headers;
  const upstream = upstreamRefusalOf(error);
  if (upstream?.graph && !upstream.transient && upstream.status >= 400) return json(upstream.status, { error: upstream.graph }, headers);
  let body: Record<string, any>;
  try {
    body = JSON.parse(String(reply.body ?? '{}'));
  } catch {
    body = {};
  }
  // A fault the service retried (throttling, 5xx, no answer): Meta's last code (code 2, service unavailable, when it
  // gave none), with the service's message and details, which name the stored message to retry. An answer that was no
  // Graph error at all is Graph's unknown error (1).
  if (upstream && (upstream.transient || !upstream.graph)) body.code = upstream.code ?? (upstream.transient ? 2 : 1);
  const terms = graphTerms(reply.statusCode, body);
  const message = String(body.message ?? body.error ?? 'An unknown error occurred');
  const graphError = graphErrorBody(terms.code, terms.type, message, detailsOf(body), event.requestContext?.requestId ?? 'local', terms.subcode);
  // A failure worth asking again for (throttling, the upstream down, the service busy): Graph's `is_transient`.
  if (terms.status === 429 || terms.status >= 500 || upstream?.transient) Object.assign(graphError.error, { is_transient: true });
  return json(terms.status, graphError, headers);
}

/**
 * `/{version}/...` with anything but `vNN.N` is not a Graph path (API Gateway routes e.g. `DELETE /team/v1` here):
 * the service's own 404 for an unknown route, before or after authentication. A route without a version is Graph's
 * versionless call (its default version).
 */
const isGraphPath = (event: APIGatewayProxyEventV2) => {
  const version = event.pathParameters?.version;
  return version === undefined || GRAPH_VERSION.test(version);
};
const unknownRoute = (event: APIGatewayProxyEventV2) => notFound(`No route for ${event.requestContext?.http?.method ?? ''} ${event.rawPath}`);

/**
 * The path parameters of every compatible route; a bad version fails here and is answered as an unknown route, an id
 * longer than any Graph id (a table key holds 2 KB) as an unknown object.
 */
export const graphPath = v.object({ version: v.optional(v.pipe(v.string(), v.regex(GRAPH_VERSION, 'version must be vNN.N'))), id: v.pipe(v.string(), v.maxLength(256)) });

/** A media id's query: Meta acts on it only when it belongs to the phone number named here (when one is). */
export const mediaQuery = v.looseObject({ phone_number_id: v.optional(v.string()) });

/** The key's business must own the phone number id of the path. */
export async function requireOwnNumber(businessId: string, phoneNumberId: string, method: string): Promise<void> {
  const own = await requirePhoneNumber(businessId).catch(() => undefined);
  if (own?.phoneNumberId !== phoneNumberId) throw unknownObject(phoneNumberId, method);
}

/** The key's business must own the WhatsApp Business Account id of the path. */
export async function requireOwnWaba(businessId: string, wabaId: string, method: string): Promise<void> {
  const business = await getBusiness(businessId);
  if (!business?.wabaId || business.wabaId !== wabaId) throw unknownObject(wabaId, method);
}
