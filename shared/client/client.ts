/**
 * A small typed client for the service, on the platform's fetch (Node 18+ or a browser):
 *
 *   const wa = new WaCrmClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.KEY! });
 *   await wa.messages.sendText('+5215512345678', 'Hola');
 *
 * Every method returns the response body of the contract; a non-2xx answer throws WaCrmError with the
 * status and the error body (for a failed delivery: `code`, `action_required` and `data.id` to retry).
 */
import type {
  AiSettings, BulkRequest, BulkResult, Contact, ContactInput, FunnelStage, MediaObject, MediaType, MembersRequest, MembersResult,
  MoveResult, PauseResult, RetryResult, Segment, SegmentInput, SegmentRules, SendAi, SendMessageRequest, SendResult, TeamAgent,
  UploadedMedia, WebhookSubscription,
} from './types.ts';

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** defaults to the global fetch */
  fetch?: typeof fetch;
  /** extra headers on every request */
  headers?: Record<string, string>;
}

/** A non-2xx answer: `status`, the contract's `error` code, and the whole body. */
export class WaCrmError extends Error {
  readonly error: string;
  /** upstream delivery code (e.g. `131047`) on delivery failures */
  readonly code?: string;
  /** seconds to wait, on 429 */
  readonly retryAfter?: number;
  constructor(readonly status: number, readonly body: any, headers?: Headers) {
    super(`${status} ${body?.error ?? 'error'}: ${body?.message ?? ''}`.trim());
    this.name = 'WaCrmError';
    this.error = typeof body?.error === 'string' ? body.error : 'error';
    if (body?.code !== undefined) this.code = String(body.code);
    const retry = body?.retry_after ?? headers?.get('retry-after');
    if (retry !== undefined && retry !== null) this.retryAfter = Number(retry);
  }
}

type Query = Record<string, string | number | boolean | undefined | null | Record<string, unknown>>;
type SendOptions = { ai?: SendAi; idempotencyKey?: string };

const enc = encodeURIComponent;

export class WaCrmClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Any call of the API: `request('GET', '/team/v1')`. Returns the parsed body; throws WaCrmError on non-2xx. */
  async request<T = any>(method: string, path: string, init: { body?: unknown; query?: Query; headers?: Record<string, string> } = {}): Promise<T> {
    return (await this.requestWithStatus<T>(method, path, init)).body;
  }

  /** Like request, with the HTTP status (useful for 202 queued sends and 207 partial bulk results). */
  async requestWithStatus<T = any>(method: string, path: string, init: { body?: unknown; query?: Query; headers?: Record<string, string> } = {}): Promise<{ status: number; body: T }> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(init.query ?? {})) {
      if (v !== undefined && v !== null) url.searchParams.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
    const isForm = typeof FormData !== 'undefined' && init.body instanceof FormData;
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}`, accept: 'application/json', ...this.options.headers, ...init.headers };
    if (init.body !== undefined && !isForm) headers['content-type'] = 'application/json';
    const res = await this.fetchImpl(url, {
      method,
      headers,
      body: init.body === undefined ? undefined : isForm ? (init.body as FormData) : JSON.stringify(init.body),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    if (!res.ok) throw new WaCrmError(res.status, body, res.headers);
    return { status: res.status, body: body as T };
  }

  readonly messages = {
    /** Any message, in service or upstream style. */
    send: (message: SendMessageRequest, options: { idempotencyKey?: string } = {}) =>
      this.request<SendResult>('POST', '/messages/v1', { body: message, headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {} }),
    sendText: (to: string, content: string, options: SendOptions = {}) =>
      this.messages.send({ to, content, ...(options.ai ? { ai: options.ai } : {}) }, options),
    /** image, video, audio, document or sticker, by `link` or uploaded media `id`. */
    sendMedia: (to: string, type: MediaType, media: MediaObject, options: SendOptions & { autoConvert?: boolean } = {}) =>
      this.messages.send({ to, type, [type]: media, ...(options.autoConvert !== undefined ? { autoConvert: options.autoConvert } : {}), ...(options.ai ? { ai: options.ai } : {}) } as SendMessageRequest, options),
    /** Template shortcut: name and body parameters (language defaults to es_MX). */
    sendTemplate: (to: string, templateName: string, parameters: string[] = [], extra: { language?: string; header_media?: { type: 'image' | 'video' | 'document'; url?: string; media_id?: string } } = {}) =>
      this.messages.send({ to, type: 'template', templateName, template_parameters: parameters, ...extra }),
    sendLocation: (to: string, location: { latitude: number; longitude: number; name?: string; address?: string }) =>
      this.messages.send({ to, type: 'location', location }),
    /** React to a message (its wamid or service id); an empty emoji removes the reaction. */
    sendReaction: (to: string, messageId: string, emoji: string) => this.messages.send({ to, type: 'reaction', reaction: { message_id: messageId, emoji } }),
    retry: (id: string) => this.request<RetryResult>('POST', `/messages/v1/${enc(id)}/retry`),
    get: (id: string) => this.request<{ message: Record<string, unknown> }>('GET', `/messages/v1/${enc(id)}`),
  };

  readonly media = {
    /** Uploads a file (multipart) and returns its media id. */
    upload: (file: Blob | Uint8Array, type: MediaType, filename = 'file', mimeType?: string) => {
      const form = new FormData();
      const blob = file instanceof Blob ? file : new Blob([file as Uint8Array<ArrayBuffer>], mimeType ? { type: mimeType } : {});
      form.set('type', type);
      form.set('file', blob, filename);
      return this.request<UploadedMedia>('POST', '/media/v1', { body: form });
    },
  };

  readonly conversations = {
    list: (query: { limit?: number; cursor?: string } = {}) => this.request<{ conversations: Record<string, unknown>[]; next_cursor: string | null }>('GET', '/conversations/v1', { query }),
    get: (id: string) => this.request<{ conversation: Record<string, unknown> }>('GET', `/conversations/v1/${enc(id)}`),
    messages: (id: string, query: { limit?: number; cursor?: string } = {}) =>
      this.request<{ messages: Record<string, unknown>[]; next_cursor: string | null }>('GET', `/conversations/v1/${enc(id)}/messages`, { query }),
  };

  readonly funnel = {
    listStages: () => this.request<{ stages: FunnelStage[] }>('GET', '/funnel/v1/stages'),
    getStage: (id: string) => this.request<{ stage: FunnelStage }>('GET', `/funnel/v1/stages/${enc(id)}`),
    createStage: (stage: { name: string; color?: string; position?: number }) => this.request<{ stage: FunnelStage }>('POST', '/funnel/v1/stages', { body: stage }),
    updateStage: (id: string, changes: { name?: string; color?: string }) => this.request<{ stage: FunnelStage }>('PATCH', `/funnel/v1/stages/${enc(id)}`, { body: changes }),
    deleteStage: (id: string) => this.request<{ success: boolean; id: string }>('DELETE', `/funnel/v1/stages/${enc(id)}`),
    reorderStages: (stageIds: string[]) => this.request<{ success: boolean; stages: FunnelStage[] }>('PATCH', '/funnel/v1/stages/reorder', { body: { stage_ids: stageIds } }),
    /** Moves a contact to a stage, or out of the funnel with `null`. */
    moveContact: (contactId: string, stageId: string | null) => this.request<MoveResult>('POST', `/funnel/v1/contacts/${enc(contactId)}/move`, { body: { stage_id: stageId } }),
  };

  readonly contacts = {
    create: (contact: ContactInput) => this.request<{ contact: Contact }>('POST', '/contacts/v1', { body: contact }),
    get: (id: string) => this.request<{ contact: Contact }>('GET', `/contacts/v1/${enc(id)}`),
    update: (id: string, changes: Partial<ContactInput>) => this.request<{ contact: Contact }>('PATCH', `/contacts/v1/${enc(id)}`, { body: changes }),
    delete: (id: string) => this.request<{ success: boolean; id: string }>('DELETE', `/contacts/v1/${enc(id)}`),
    list: (query: { limit?: number; cursor?: string; search?: string; filters?: Record<string, unknown> } = {}) =>
      this.request<{ contacts: Contact[]; next_cursor: string | null }>('GET', '/contacts/v1', { query }),
    /** Bulk operation; the status is 207 when any item failed (see `error_count`). */
    bulk: async (request: BulkRequest) => {
      const { status, body } = await this.requestWithStatus<BulkResult>('POST', '/contacts/v1/bulk', { body: request });
      return { ...body, status };
    },
  };

  readonly segments = {
    list: () => this.request<{ data: Segment[] }>('GET', '/segments'),
    get: (id: string, query: { limit?: number; offset?: number } = {}) => this.request<{ data: Segment }>('GET', `/segments/${enc(id)}`, { query }),
    create: (segment: SegmentInput) => this.request<{ data: Segment }>('POST', '/segments', { body: segment }),
    update: (id: string, changes: Partial<Omit<SegmentInput, 'type'>>) => this.request<{ data: Segment }>('PATCH', `/segments/${enc(id)}`, { body: changes }),
    delete: (id: string) => this.request<{ success: boolean; id: string }>('DELETE', `/segments/${enc(id)}`),
    preview: (rules: SegmentRules) => this.request<{ data: { count: number; preview: Contact[] } }>('POST', '/segments/preview', { body: { rules } }),
    addContacts: (id: string, contactIds: string[]) => this.request<{ data: MembersResult }>('POST', `/segments/${enc(id)}/contacts`, { body: { contactIds } }),
    removeContact: (id: string, contactId: string) => this.request<{ data: MembersResult }>('DELETE', `/segments/${enc(id)}/contacts/${enc(contactId)}`),
    evaluate: (id: string) => this.request<{ data: Segment }>('POST', `/segments/${enc(id)}/evaluate`),
    usage: (id: string) => this.request<{ data: Record<string, unknown> }>('GET', `/segments/${enc(id)}/usage`),
    members: (id: string, request: MembersRequest) => this.request<{ data: MembersResult }>('POST', `/segments/${enc(id)}/members`, { body: request }),
  };

  readonly webhooks = {
    /** The answer carries the signing `secret` (shown only here and on regenerate). */
    create: (subscription: { name: string; url: string; events: string[] }) => this.request<{ data: WebhookSubscription }>('POST', '/user-webhooks', { body: subscription }),
    list: () => this.request<{ data: WebhookSubscription[] }>('GET', '/user-webhooks'),
    get: (id: string) => this.request<{ data: WebhookSubscription }>('GET', `/user-webhooks/${enc(id)}`),
    update: (id: string, changes: Partial<{ name: string; url: string; events: string[]; enabled: boolean }>) =>
      this.request<{ data: WebhookSubscription }>('PATCH', `/user-webhooks/${enc(id)}`, { body: changes }),
    delete: (id: string) => this.request<{ success: boolean; id: string }>('DELETE', `/user-webhooks/${enc(id)}`),
    regenerateSecret: (id: string) => this.request<{ data: WebhookSubscription }>('POST', `/user-webhooks/${enc(id)}/regenerate-secret`),
    test: (id: string) => this.request<{ data: Record<string, unknown> }>('POST', `/user-webhooks/${enc(id)}/test`),
    deliveries: (id: string, query: { limit?: number; cursor?: string } = {}) =>
      this.request<{ data: Record<string, unknown>[]; next_cursor: string | null }>('GET', `/user-webhooks/${enc(id)}/deliveries`, { query }),
    redeliver: (id: string, deliveryId: string) => this.request<{ data: Record<string, unknown> }>('POST', `/user-webhooks/${enc(id)}/deliveries/${enc(deliveryId)}/redeliver`),
  };

  readonly ai = {
    /** Turns the AI on or off permanently in one conversation. */
    setConversation: (conversationId: string, aiEnabled: boolean) =>
      this.request<{ message: string; settings: AiSettings }>('PATCH', `/conversations/v1/${enc(conversationId)}/ai`, { body: { aiEnabled } }),
    /** Pauses the AI in one conversation for `duration` minutes (1-1440, default 5). */
    pauseConversation: (conversationId: string, duration?: number) =>
      this.request<PauseResult>('POST', `/conversations/v1/${enc(conversationId)}/ai/pause`, { body: duration === undefined ? {} : { duration } }),
    /** Pauses the AI for the whole business (1-1440 minutes). */
    pauseAll: (duration: number) => this.request<PauseResult>('POST', '/agent/v1/pause', { body: { duration } }),
    /** Turns the AI on or off for the whole business. */
    toggleAll: (enabled: boolean) => this.request<{ success: boolean; enabled: boolean }>('POST', '/agent/v1/toggle', { body: { enabled } }),
    status: () => this.request<{ enabled: boolean; pausedUntil: string | null }>('GET', '/agent/v1/status'),
  };

  readonly team = {
    list: () => this.request<{ agents: TeamAgent[] }>('GET', '/team/v1'),
  };

  readonly broadcasts = {
    create: (broadcast: Record<string, unknown> & { name: string }) => this.request<{ data: Record<string, unknown> }>('POST', '/broadcasts/v1', { body: broadcast }),
    list: (query: { limit?: number; cursor?: string; status?: string } = {}) => this.request<{ data: Record<string, unknown>[]; next_cursor: string | null }>('GET', '/broadcasts/v1', { query }),
    get: (id: string) => this.request<{ data: Record<string, unknown> }>('GET', `/broadcasts/v1/${enc(id)}`),
    recipients: (id: string, query: { limit?: number; cursor?: string; status?: string } = {}) =>
      this.request<{ data: Record<string, unknown>[]; next_cursor: string | null }>('GET', `/broadcasts/v1/${enc(id)}/recipients`, { query }),
    cancel: (id: string) => this.request<{ data: Record<string, unknown> }>('POST', `/broadcasts/v1/${enc(id)}/cancel`),
  };
}
