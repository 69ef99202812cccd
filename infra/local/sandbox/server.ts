/**
 * The upstream sandbox: a local stand-in for the WhatsApp Cloud API (Graph-API-shaped paths, Bearer token,
 * Graph error bodies, signed webhooks) with the rules of decisions.md, plus control endpoints under
 * `/__sandbox/` that tests and developers use to play the customer's side.
 *
 * Graph paths:  POST /{version}/{phone-number-id}/messages, POST /{version}/{phone-number-id}/media (multipart),
 *               GET /{version}/{media-id}[?phone_number_id=], DELETE /{version}/{media-id},
 *               GET /{version}/{waba-id}/message_templates, GET /__sandbox/media/{id}/download (the media URL).
 * Control:      POST /__sandbox/inbound, GET /__sandbox/sent, GET /__sandbox/reads, POST /__sandbox/status, POST /__sandbox/faults
 *               ({ kind: error500 | throttle | hang | error, code?, count?, target? }),
 *               POST /__sandbox/window, POST /__sandbox/reset,
 *               POST /__sandbox/tokens ({ phone_number_id, token }: that number's own token, the only one it accepts
 *               from then on; again to rotate it), GET /__sandbox/requests (every Graph call with its Authorization).
 *
 * Tokens: the stack's `accessToken` works for every number without a token of its own and for template lists.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GraphError, sandboxErrors } from './errors.ts';
import { checkMessage, checkReadReceipt, recipientOf } from './rules.ts';
import { SandboxState, digits, newWamid } from './state.ts';
import { SANDBOX_TEMPLATES } from './templates.ts';
import { deliver, notification } from './webhooks.ts';
import { AI_COMPLETIONS_PATH, aiResponder } from './ai-responder.ts';

export interface SandboxOptions {
  port: number;
  /** Where webhooks go; a function when the service's address is known only after the sandbox started. */
  serviceWebhookUrl: string | (() => string);
  appSecret: string;
  accessToken: string;
  host?: string;
  /**
   * Resolves once the service has processed the webhooks delivered so far (the local stack: its upstream-events
   * queue caught up), so that a control call answers when its effect can be read. By default at once.
   */
  processed?: () => Promise<void>;
}

export interface Sandbox {
  url: string;
  close(): Promise<void>;
  setDefaultPhoneNumberId(id: string): void;
  /**
   * A webhook that reached the service another way (a client signed and posted it to POST /webhooks/upstream):
   * the customers' messages in it are known here as Meta knows every message sent to its numbers.
   */
  observe(notification: unknown): void;
  /** In-process access for tests. */
  state: SandboxState;
}

/** Cloud API per-type size limits the sandbox enforces on upload (bytes). */
const UPLOAD_LIMITS: [RegExp, number][] = [
  [/^image\//, 5 * 1024 * 1024],
  [/^video\//, 16 * 1024 * 1024],
  [/^audio\//, 16 * 1024 * 1024],
  [/^(application|text)\//, 100 * 1024 * 1024],
];

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const parseJson = (raw: Buffer): Record<string, any> => {
  try {
    const parsed = JSON.parse(raw.toString('utf8') || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    /* answered below */
  }
  throw sandboxErrors.invalidParameter('The body must be a JSON object');
};

export async function startSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const state = new SandboxState();
  const webhookUrl = () => (typeof opts.serviceWebhookUrl === 'function' ? opts.serviceWebhookUrl() : opts.serviceWebhookUrl);
  const host = opts.host ?? '127.0.0.1';
  let baseUrl = '';
  const hanging = new Set<ServerResponse>();

  /** Whether the call's token may act for `phoneNumberId` (undefined: a call not tied to a number, e.g. a WABA's templates). */
  const authorized = (req: IncomingMessage, phoneNumberId: string | undefined) => {
    const own = phoneNumberId === undefined ? undefined : state.tokens.get(phoneNumberId);
    const accepted = own !== undefined ? [own] : phoneNumberId === undefined ? [opts.accessToken, ...state.tokens.values()] : [opts.accessToken];
    return accepted.some((token) => req.headers.authorization === `Bearer ${token}`);
  };

  const phoneNumberOr = (given: unknown): string => {
    const id = typeof given === 'string' && given ? given : state.defaultPhoneNumberId;
    if (!id) throw sandboxErrors.invalidParameter('phone_number_id is required (no default phone number id is set)');
    return id;
  };

  /** Applies an injected fault; returns true when the response has been taken care of. */
  const fault = (res: ServerResponse, target: string): boolean => {
    const f = state.takeFault(target);
    if (!f) return false;
    if (f.kind === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return true;
    }
    const err = f.kind === 'throttle' ? sandboxErrors.throttled()
      : f.kind === 'error' ? new GraphError(f.status ?? 400, f.code ?? 100, f.message ?? 'Injected error', f.details ?? 'Error injected with POST /__sandbox/faults', 'OAuthException', f.subcode)
      : sandboxErrors.internal();
    send(res, err.status, err.body());
    return true;
  };

  // ---- control endpoints -------------------------------------------------------------------------
  const control = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    if (req.method === 'POST' && path === '/__sandbox/inbound') {
      const body = parseJson(await readBody(req));
      const phoneNumberId = phoneNumberOr(body.phone_number_id);
      const from = digits(body.from);
      if (from.length < 7) throw sandboxErrors.invalidParameter('from must be a phone number');
      const ts = body.timestamp !== undefined ? toEpochMs(body.timestamp) : Date.now();
      const wamid = newWamid();
      const message: Record<string, unknown> = { from, id: wamid, timestamp: String(Math.floor(ts / 1000)) };
      if (body.interactive || body.button) {
        Object.assign(message, body.button ? { type: 'button', button: body.button } : { type: 'interactive', interactive: body.interactive });
      } else {
        Object.assign(message, { type: 'text', text: { body: String(body.text ?? 'Hola') } });
      }
      if (body.context) message.context = body.context;
      state.customerWrote(phoneNumberId, from, wamid, ts);
      const payload = notification(phoneNumberId, {
        contacts: [{ profile: { name: String(body.name ?? `Customer ${from.slice(-4)}`) }, wa_id: from }],
        messages: [message],
      });
      const delivered = await deliver(webhookUrl(), opts.appSecret, payload).catch(() => 0);
      await opts.processed?.();
      return send(res, 200, { wamid, webhook_status: delivered, payload });
    }
    if (req.method === 'GET' && path === '/__sandbox/sent') {
      const to = url.searchParams.get('to');
      const list = to ? state.sent.filter((m) => m.to === digits(to)) : state.sent;
      // The payloads exactly as accepted, newest last; `detail=1` adds the wamid and sending number.
      if (url.searchParams.get('detail')) return send(res, 200, list);
      return send(res, 200, list.map((m) => m.payload));
    }
    if (req.method === 'GET' && path === '/__sandbox/reads') return send(res, 200, state.reads);
    if (req.method === 'POST' && path === '/__sandbox/status') {
      const body = parseJson(await readBody(req));
      const sent = state.sent.find((m) => m.wamid === body.wamid);
      if (!sent) throw sandboxErrors.invalidParameter(`Unknown wamid ${body.wamid}`);
      if (!['sent', 'delivered', 'read', 'failed'].includes(body.status)) throw sandboxErrors.invalidParameter('status must be sent, delivered, read or failed');
      const status: Record<string, unknown> = {
        id: sent.wamid,
        status: body.status,
        timestamp: String(Math.floor((body.timestamp !== undefined ? toEpochMs(body.timestamp) : Date.now()) / 1000)),
        recipient_id: sent.to,
        // As the Cloud API sends them: the conversation and pricing of the message, and the client's callback data.
        conversation: { id: `conv_${sent.wamid.slice(6, 18)}`, ...(body.status === 'sent' ? { expiration_timestamp: String(Math.floor(Date.now() / 1000) + 86_400) } : {}), origin: { type: sent.payload.type === 'template' ? 'utility' : 'service' } },
        pricing: { billable: sent.payload.type === 'template', pricing_model: 'PMP', category: sent.payload.type === 'template' ? 'utility' : 'service', type: sent.payload.type === 'template' ? 'regular' : 'free_customer_service' },
        ...(sent.payload.biz_opaque_callback_data !== undefined ? { biz_opaque_callback_data: sent.payload.biz_opaque_callback_data } : {}),
      };
      // As the Cloud API does: the message's callback data comes back in its statuses.
      const callback = (sent.payload as Record<string, unknown> | undefined)?.biz_opaque_callback_data;
      if (callback !== undefined) status.biz_opaque_callback_data = callback;
      if (body.status === 'failed') {
        const code = Number(body.code ?? 131000);
        const err = [130472, 131026, 131042, 131048].includes(code) ? sandboxErrors.byRecipient(code)
          : code === 131047 ? sandboxErrors.windowClosed()
          : new GraphError(400, code, body.title ?? 'Message failed', body.details ?? 'The message could not be delivered');
        status.errors = [{ code: err.code, title: err.message, message: err.message, error_data: { details: err.details } }];
      }
      const delivered = await deliver(webhookUrl(), opts.appSecret, notification(sent.phoneNumberId, { statuses: [status] })).catch(() => 0);
      await opts.processed?.();
      return send(res, 200, { success: true, webhook_status: delivered });
    }
    if (req.method === 'POST' && path === '/__sandbox/faults') {
      const body = parseJson(await readBody(req));
      const kind = body.kind ?? body.mode;
      if (!['error500', 'throttle', 'hang', 'error'].includes(kind)) throw sandboxErrors.invalidParameter('kind must be error500, throttle, hang or error (with code)');
      if (kind === 'error' && !Number.isInteger(body.code)) throw sandboxErrors.invalidParameter('kind error needs an integer code');
      state.faults.push({
        kind,
        remaining: Math.max(1, Number(body.count ?? 1)),
        target: String(body.target ?? 'any'),
        ...(kind === 'error' ? {
          code: body.code,
          status: Number(body.status ?? 400),
          ...(typeof body.message === 'string' ? { message: body.message } : {}),
          ...(typeof body.details === 'string' ? { details: body.details } : {}),
          ...(Number.isInteger(body.subcode) ? { subcode: body.subcode } : {}),
        } : {}),
      });
      return send(res, 200, { faults: state.faults });
    }
    if (req.method === 'POST' && path === '/__sandbox/window') {
      const body = parseJson(await readBody(req));
      const phoneNumberId = phoneNumberOr(body.phone_number_id);
      const key = state.windowKey(phoneNumberId, String(body.to ?? ''));
      if (body.open === false) state.lastInbound.delete(key);
      else state.lastInbound.set(key, body.at !== undefined ? toEpochMs(body.at) : Date.now());
      return send(res, 200, { success: true });
    }
    if (req.method === 'POST' && path === '/__sandbox/tokens') {
      const body = parseJson(await readBody(req));
      if (typeof body.token !== 'string' || !body.token) throw sandboxErrors.invalidParameter('token is required');
      state.tokens.set(phoneNumberOr(body.phone_number_id), body.token);
      return send(res, 200, { success: true });
    }
    if (req.method === 'GET' && path === '/__sandbox/requests') return send(res, 200, state.requests);
    if (req.method === 'POST' && path === '/__sandbox/reset') {
      state.reset();
      return send(res, 200, { success: true });
    }
    const download = /^\/__sandbox\/media\/([^/]+)\/download$/.exec(path);
    if (req.method === 'GET' && download) {
      const media = state.media.get(download[1]);
      state.requests.push({ method: 'GET', path, authorization: req.headers.authorization });
      if (!authorized(req, media?.phoneNumberId)) throw sandboxErrors.badToken();
      if (!media) return send(res, 404, { error: { message: 'Media not found', code: 100 } });
      res.writeHead(200, { 'content-type': media.mimeType, 'content-length': String(media.bytes.length) });
      res.end(media.bytes);
      return;
    }
    send(res, 404, { error: 'not_found', message: `No sandbox control ${req.method} ${path}` });
  };

  // ---- Graph API -----------------------------------------------------------------------------------
  const graph = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts.length < 2 || !/^v\d+(\.\d+)?$/.test(parts[0])) throw sandboxErrors.unknownPath(url.pathname);
    const [, id, edge] = parts;
    state.requests.push({ method: req.method ?? 'GET', path: url.pathname, authorization: req.headers.authorization });
    const number = edge === 'messages' || edge === 'media' ? id : parts.length === 2 ? state.media.get(id)?.phoneNumberId : undefined;
    if (!authorized(req, number)) throw sandboxErrors.badToken();

    if (req.method === 'POST' && edge === 'messages' && parts.length === 3) {
      if (fault(res, 'messages')) return;
      const payload = parseJson(await readBody(req));
      if (payload.status === 'read') {
        const invalid = checkReadReceipt(state, id, payload);
        if (invalid) throw invalid;
        state.reads.push({ phoneNumberId: id, messageId: payload.message_id, ...(payload.typing_indicator ? { typingIndicator: payload.typing_indicator } : {}), at: new Date().toISOString() });
        return send(res, 200, { success: true });
      }
      const err = checkMessage(state, id, payload);
      if (err) throw err;
      const wamid = newWamid();
      state.sent.push({ wamid, phoneNumberId: id, to: recipientOf(payload), payload, at: new Date().toISOString() });
      return send(res, 200, {
        messaging_product: 'whatsapp',
        contacts: [{ input: String(payload.to), wa_id: recipientOf(payload) }],
        messages: [{ id: wamid, ...(payload.type === 'template' ? { message_status: 'accepted' } : {}) }],
      });
    }
    if (req.method === 'POST' && edge === 'media' && parts.length === 3) {
      if (fault(res, 'media')) return;
      const raw = await readBody(req);
      const form = await new Request('http://sandbox/upload', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body: raw })
        .formData()
        .catch(() => undefined);
      const file = form?.get('file');
      if (!form || !file || typeof file === 'string') throw sandboxErrors.invalidParameter('The parameter file is required (multipart/form-data)');
      if (form.get('messaging_product') !== 'whatsapp') throw sandboxErrors.invalidParameter('messaging_product must be "whatsapp"');
      const mimeType = String(form.get('type') || file.type || 'application/octet-stream');
      const bytes = Buffer.from(await file.arrayBuffer());
      const limit = UPLOAD_LIMITS.find(([re]) => re.test(mimeType));
      if (!limit) throw sandboxErrors.unsupportedMedia(mimeType);
      if (bytes.length > limit[1]) throw sandboxErrors.fileTooLarge(limit[1]);
      const media = state.addMedia(id, bytes, mimeType, file.name || undefined);
      return send(res, 200, { id: media.id });
    }
    if (req.method === 'GET' && edge === 'message_templates' && parts.length === 3) {
      if (fault(res, 'templates')) return;
      return send(res, 200, { data: SANDBOX_TEMPLATES, paging: { cursors: { before: 'MAZDZD', after: 'MjQZD' } } });
    }
    if (parts.length === 2 && (req.method === 'GET' || req.method === 'DELETE')) {
      if (fault(res, 'media')) return;
      const media = state.media.get(id);
      const owner = url.searchParams.get('phone_number_id');
      if (!media || (owner && media.phoneNumberId !== owner)) {
        throw new GraphError(400, 100, `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`, 'Media not found for this phone number', 'GraphMethodException', 33);
      }
      if (req.method === 'DELETE') {
        state.media.delete(id);
        return send(res, 200, { success: true });
      }
      return send(res, 200, {
        messaging_product: 'whatsapp',
        url: `${baseUrl}/__sandbox/media/${media.id}/download`,
        mime_type: media.mimeType,
        sha256: media.sha256,
        file_size: media.bytes.length,
        id: media.id,
      });
    }
    throw sandboxErrors.unknownPath(url.pathname);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const run = url.pathname.startsWith('/__sandbox/') ? control : url.pathname === AI_COMPLETIONS_PATH ? aiResponder : graph;
    run(req, res, url).catch((err) => {
      if (res.headersSent) return void res.end();
      if (err instanceof GraphError) return send(res, err.status, err.body());
      send(res, 500, sandboxErrors.internal().body());
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://${host}:${port}`;

  return {
    url: baseUrl,
    state,
    setDefaultPhoneNumberId: (id: string) => {
      state.defaultPhoneNumberId = id;
    },
    observe: (body: unknown) => {
      for (const entry of asList((body as { entry?: unknown })?.entry)) {
        for (const change of asList((entry as { changes?: unknown })?.changes)) {
          const value = (change as { value?: Record<string, any> })?.value;
          const phoneNumberId = value?.metadata?.phone_number_id;
          if (typeof phoneNumberId !== 'string') continue;
          for (const m of asList(value?.messages) as Record<string, unknown>[]) {
            if (typeof m?.from === 'string' && typeof m.id === 'string') state.customerWrote(phoneNumberId, m.from, m.id, m.timestamp !== undefined ? toEpochMs(m.timestamp) : Date.now());
          }
        }
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const asList = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);

/** Unix seconds, epoch milliseconds or an ISO string → epoch milliseconds. */
function toEpochMs(value: unknown): number {
  if (typeof value === 'number') return value < 1e12 ? value * 1000 : value;
  const n = Number(value);
  if (Number.isFinite(n)) return n < 1e12 ? n * 1000 : n;
  const t = Date.parse(String(value));
  if (Number.isNaN(t)) throw sandboxErrors.invalidParameter('timestamp must be unix seconds or ISO 8601');
  return t;
}
