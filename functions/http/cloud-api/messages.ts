/**
 * POST /{version}/{id}/messages: the Cloud API's send endpoint, for Cloud API clients and SDKs pointed at
 * this service. The same pipeline as POST /messages/v1 (window, storage, events, idempotency, AI handoff, retry,
 * rate limits); the answer is the Cloud API's `{ messaging_product, contacts, messages: [{ id }] }`.
 */
import { endpoint } from '#shared/http/endpoint.ts';
import { validationError } from '#shared/http/errors.ts';
import { send } from '#shared/messages/send.ts';
import { isReadReceipt, markRead } from '#shared/messages/read-receipt.ts';
import { graphPath, requireOwnNumber, toGraphReply } from '#shared/cloud-api/graph.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /{version}/{id}/messages',
    summary: 'Cloud API compatible: send a message (any Cloud API message body) or a read receipt / typing indicator; version vNN.N',
    params: graphPath,
    errorReply: toGraphReply,
    responses: {
      200: 'Cloud API send result { messaging_product, contacts: [{ input, wa_id }], messages: [{ id: wamid }] }, or { success: true } for a read receipt',
      400: 'Graph error { error: { message, type, code, error_subcode?, error_data: { messaging_product, details }, fbtrace_id } }: code 100 invalid parameter, code 100 subcode 33 for a phone number id not this business\'s (Meta\'s unknown object), 132000 for template parameters that do not fit, or the upstream\'s own refusal as Meta answered it (131047...; any status Meta gives)',
      401: 'Graph error code 190: API key missing or invalid',
      429: 'Graph error code 130429: rate limit',
      500: 'Graph error with Meta\'s last code (131000, 3): the upstream did not accept the message after retries (stored failed, retryable; the details name its id)',
      503: 'Graph error code 2 (or 131016): the upstream did not answer the send in time (stored failed, retryable; the details name its id)',
    },
  },
  async ({ auth, body, headers, params }) => {
    await requireOwnNumber(auth.businessId, params.id, 'POST');
    // Meta requires it on every message and receipt (POST /messages/v1 tells the two styles apart by it).
    if ((body as { messaging_product?: unknown } | undefined)?.messaging_product == null) {
      throw validationError({ messaging_product: ['is required: "whatsapp"'] }, 'The parameter messaging_product is required.');
    }
    if (isReadReceipt(body)) return { status: 200, body: await markRead(auth.businessId, body) };
    const idempotencyKey = headers['idempotency-key'];
    const outcome = await send(auth.businessId, body, { sentBy: 'api', quickRepliesAsSent: true, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) });
    const result = outcome.body as { contacts: unknown; messages: { id: string; wamid: string | null }[] };
    // A media send still being prepared (202) has no wamid yet: the service's message id stands for it. A template
    // the upstream took is `accepted`, as Meta answers for templates.
    const accepted = (body as unknown as { type?: unknown } | undefined)?.type === 'template' ? { message_status: 'accepted' } : {};
    const messages = result.messages.map((m) => (m.wamid ? { id: m.wamid, ...accepted } : { id: m.id, message_status: 'accepted' }));
    return { status: 200, body: { messaging_product: 'whatsapp', contacts: result.contacts, messages }, headers: outcome.headers };
  },
);
