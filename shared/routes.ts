/**
 * The one route table. Each row is one HTTP endpoint and one Lambda function: it drives the CDK stack
 * (a function and an API route per row), the local server (the same handler modules mounted in-process),
 * the OpenAPI document (from the schemas each handler module exports), and the scope tests.
 *
 * - handler: module under functions/, exporting `handler` (the Lambda entry) and `spec` (its schemas).
 * - scope:   the scope a key must hold; `null` for routes without API-key auth (they authenticate otherwise).
 * - limit:   the per-key rate-limit class (shared/config.ts `limits`); `null` for unauthenticated routes.
 */
import type { Scope } from '#shared/auth/scopes.ts';
import type { LimitClass } from '#shared/config.ts';
import type { QueueName } from '#shared/queue/queue.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface Route {
  method: Method;
  path: string;
  handler: string;
  scope: Scope | null;
  limit: LimitClass | null;
  /** Extra memory or time for endpoints that do more than a few table calls. */
  memoryMb?: number;
  timeoutSeconds?: number;
}

const r = (method: Method, path: string, handler: string, scope: Scope | null, limit: LimitClass | null = 'requests', extra: Partial<Route> = {}): Route =>
  ({ method, path, handler, scope, limit: scope === null ? null : limit, ...extra });

export const routes: Route[] = [
  // Meta: the reference (public).
  r('GET', '/openapi.json', 'http/meta/openapi', null),
  r('GET', '/docs', 'http/meta/docs', null),
  r('GET', '/docs/scalar.js', 'http/meta/docs-asset', null),

  // Upstream (WhatsApp Cloud API) webhook: verified by hub.verify_token / X-Hub-Signature-256, not by API key.
  r('GET', '/webhooks/upstream', 'http/upstream/verify', null),
  r('POST', '/webhooks/upstream', 'http/upstream/receive', null),

  // Team.
  r('GET', '/team/v1', 'http/team/list', 'team:read'),

  // Messages and conversations.
  r('POST', '/messages/v1', 'http/messages/send', 'messages:write', 'messages', { timeoutSeconds: 29, memoryMb: 512 }),
  r('POST', '/messages/v1/{id}/retry', 'http/messages/retry', 'messages:write', 'messages', { timeoutSeconds: 29 }),
  r('GET', '/messages/v1/{id}', 'http/messages/get', 'messages:read'),
  r('GET', '/conversations/v1', 'http/conversations/list', 'conversations:read'),
  r('GET', '/conversations/v1/{id}', 'http/conversations/get', 'conversations:read'),
  r('GET', '/conversations/v1/{id}/messages', 'http/conversations/messages', 'messages:read'),
  r('POST', '/conversations/v1/{id}/close', 'http/conversations/close', 'conversations:write'),

  // AI control.
  r('PATCH', '/conversations/v1/{id}/ai', 'http/ai/conversation-toggle', 'conversations:write'),
  r('POST', '/conversations/v1/{id}/ai/pause', 'http/ai/conversation-pause', 'conversations:write'),
  r('POST', '/agent/v1/pause', 'http/ai/global-pause', 'agent:write'),
  r('POST', '/agent/pause', 'http/ai/global-pause', 'agent:write'),
  r('POST', '/agent/v1/toggle', 'http/ai/global-toggle', 'agent:write'),
  r('POST', '/agent/toggle', 'http/ai/global-toggle', 'agent:write'),
  r('GET', '/agent/v1/status', 'http/ai/status', 'agent:write'),
  r('GET', '/agent/v1/settings', 'http/ai/settings-get', 'agent:write'),
  r('PATCH', '/agent/v1/settings', 'http/ai/settings-update', 'agent:write'),

  // Media.
  r('POST', '/media/v1', 'http/media/upload', 'messages:write', 'requests', { timeoutSeconds: 29, memoryMb: 512 }),
  r('POST', '/media/v1/uploads', 'http/media/create-upload', 'messages:write'),
  r('GET', '/media/v1/files/{token}', 'http/media/file', null),
  r('POST', '/media/v1/uploads/{id}/complete', 'http/media/complete-upload', 'messages:write', 'requests', { timeoutSeconds: 29, memoryMb: 512 }),

  // Funnel.
  r('GET', '/funnel/v1/stages', 'http/funnel/list-stages', 'funnels:read'),
  r('POST', '/funnel/v1/stages', 'http/funnel/create-stage', 'funnels:write'),
  r('PATCH', '/funnel/v1/stages/reorder', 'http/funnel/reorder-stages', 'funnels:write'),
  r('GET', '/funnel/v1/stages/{id}', 'http/funnel/get-stage', 'funnels:read'),
  r('PATCH', '/funnel/v1/stages/{id}', 'http/funnel/update-stage', 'funnels:write'),
  r('DELETE', '/funnel/v1/stages/{id}', 'http/funnel/delete-stage', 'funnels:write'),
  r('POST', '/funnel/v1/contacts/{id}/move', 'http/funnel/move-contact', 'funnels:write'),

  // Contacts.
  r('POST', '/contacts/v1', 'http/contacts/create', 'contacts:write'),
  r('GET', '/contacts/v1', 'http/contacts/list', 'contacts:read'),
  r('POST', '/contacts/v1/bulk', 'http/contacts/bulk', 'contacts:write', 'bulk', { timeoutSeconds: 29, memoryMb: 512 }),
  r('GET', '/contacts/v1/{id}', 'http/contacts/get', 'contacts:read'),
  r('PATCH', '/contacts/v1/{id}', 'http/contacts/update', 'contacts:write'),
  r('DELETE', '/contacts/v1/{id}', 'http/contacts/delete', 'contacts:write'),

  // Segments (no version prefix, as the contract says).
  r('GET', '/segments', 'http/segments/list', 'contacts:read', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),
  r('POST', '/segments', 'http/segments/create', 'contacts:write', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),
  r('POST', '/segments/preview', 'http/segments/preview', 'contacts:read', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),
  r('GET', '/segments/{id}', 'http/segments/get', 'contacts:read', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),
  r('PATCH', '/segments/{id}', 'http/segments/update', 'contacts:write', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),
  r('DELETE', '/segments/{id}', 'http/segments/delete', 'contacts:write', 'requests', { timeoutSeconds: 29 }),
  r('POST', '/segments/{id}/contacts', 'http/segments/add-contacts', 'contacts:write', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),
  r('DELETE', '/segments/{id}/contacts/{contactId}', 'http/segments/remove-contact', 'contacts:write', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),
  r('POST', '/segments/{id}/evaluate', 'http/segments/evaluate', 'contacts:write', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),
  r('GET', '/segments/{id}/usage', 'http/segments/usage', 'contacts:read'),
  r('POST', '/segments/{id}/members', 'http/segments/members', 'contacts:write', 'requests', { timeoutSeconds: 29, memoryMb: 1024 }),

  // Webhook subscriptions (no version prefix, as the contract says).
  r('POST', '/user-webhooks', 'http/webhooks/create', 'webhooks:write'),
  r('GET', '/user-webhooks', 'http/webhooks/list', 'webhooks:write'),
  r('GET', '/user-webhooks/{id}', 'http/webhooks/get', 'webhooks:write'),
  r('PATCH', '/user-webhooks/{id}', 'http/webhooks/update', 'webhooks:write'),
  r('DELETE', '/user-webhooks/{id}', 'http/webhooks/delete', 'webhooks:write'),
  r('POST', '/user-webhooks/{id}/regenerate-secret', 'http/webhooks/regenerate-secret', 'webhooks:write'),
  r('POST', '/user-webhooks/{id}/test', 'http/webhooks/test', 'webhooks:write', 'requests', { timeoutSeconds: 29 }),
  r('GET', '/user-webhooks/{id}/deliveries', 'http/webhooks/deliveries', 'webhooks:write'),
  r('POST', '/user-webhooks/{id}/deliveries/{deliveryId}/redeliver', 'http/webhooks/redeliver', 'webhooks:write'),

  // Cloud API compatible paths (Graph API style, version vNN.N): Cloud API clients and SDKs use the service by
  // changing their base URL. Routes with literal segments above win over these, as in API Gateway.
  r('POST', '/{version}/{id}/messages', 'http/cloud-api/messages', 'messages:write', 'messages', { timeoutSeconds: 29, memoryMb: 512 }),
  r('POST', '/{version}/{id}/media', 'http/cloud-api/media-upload', 'messages:write', 'requests', { timeoutSeconds: 29, memoryMb: 512 }),
  // A customer's media is fetched from the upstream on its first read (up to 100 MB): the upload's budget.
  r('GET', '/{version}/{id}', 'http/cloud-api/media-get', 'messages:read', 'requests', { timeoutSeconds: 29, memoryMb: 512 }),
  // Calls of the upstream (up to three attempts of 8 s each) take the time-out of the sends.
  r('DELETE', '/{version}/{id}', 'http/cloud-api/media-delete', 'messages:write', 'requests', { timeoutSeconds: 29 }),
  r('GET', '/{version}/{id}/message_templates', 'http/cloud-api/templates', 'messages:read', 'requests', { timeoutSeconds: 29 }),
  // Graph answers a call without a version at the app's default version, and some clients make them (those that resolve
  // paths against a base URL ending in `/v23.0` drop its last segment). Not `GET /{id}`: the service's own two-segment paths.
  r('POST', '/{id}/messages', 'http/cloud-api/messages', 'messages:write', 'messages', { timeoutSeconds: 29, memoryMb: 512 }),
  r('POST', '/{id}/media', 'http/cloud-api/media-upload', 'messages:write', 'requests', { timeoutSeconds: 29, memoryMb: 512 }),
  r('GET', '/{id}/message_templates', 'http/cloud-api/templates', 'messages:read', 'requests', { timeoutSeconds: 29 }),

  // Broadcasts.
  // A broadcast's template is checked against the upstream's catalogue, as a send's is.
  r('POST', '/broadcasts/v1', 'http/broadcasts/create', 'messages:write', 'requests', { timeoutSeconds: 29 }),
  r('GET', '/broadcasts/v1', 'http/broadcasts/list', 'messages:read'),
  r('GET', '/broadcasts/v1/{id}', 'http/broadcasts/get', 'messages:read'),
  r('GET', '/broadcasts/v1/{id}/recipients', 'http/broadcasts/recipients', 'messages:read'),
  r('POST', '/broadcasts/v1/{id}/cancel', 'http/broadcasts/cancel', 'messages:write'),
];

export const routeKey = (method: string, path: string) => `${method} ${path}`;

const byKey = new Map(routes.map((route) => [routeKey(route.method, route.path), route]));

export const findRoute = (key: string): Route => {
  const route = byKey.get(key);
  if (!route) throw new Error(`route ${key} is not in shared/routes.ts`);
  return route;
};

/**
 * SQS-triggered workers: one Lambda and one queue (with its DLQ) each. The local runtime runs the same
 * modules on the messages its SQS stand-in received, handing them real SQS event shapes.
 */
export interface Worker {
  /** A queue of shared/queue/queue.ts, which names the variable holding its URL. */
  queue: QueueName;
  handler: string;
  batchSize: number;
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
  memoryMb?: number;
  /** Set for each worker: the deployed function, the local runtime and the queue's visibility time-out all read it. */
  timeoutSeconds: number;
  /** At most this many batches at once (the event source's maximum concurrency); unset: as many as Lambda scales to. */
  maxConcurrency?: number;
  /** Only the media worker bundles sharp and ffmpeg. */
  nativeMedia?: boolean;
}

export const workers: Worker[] = [
  // Its records are handled one after another: a batch of ten inbound notifications in a few seconds, 30 s at worst.
  { queue: 'upstream-events', handler: 'workers/upstream-events', batchSize: 10, visibilityTimeoutSeconds: 60, maxReceiveCount: 5, timeoutSeconds: 30 },
  { queue: 'events', handler: 'workers/event-fanout', batchSize: 10, visibilityTimeoutSeconds: 60, maxReceiveCount: 5, timeoutSeconds: 30 },
  // Each record may wait up to the 10 s receiver time-out; the batch's records are sent in parallel.
  { queue: 'webhook-deliveries', handler: 'workers/webhook-delivery', batchSize: 10, visibilityTimeoutSeconds: 60, maxReceiveCount: 10, timeoutSeconds: 30 },
  { queue: 'media', handler: 'workers/media', batchSize: 1, visibilityTimeoutSeconds: 180, maxReceiveCount: 3, memoryMb: 2048, timeoutSeconds: 120, nativeMedia: true },
  { queue: 'ai', handler: 'workers/ai', batchSize: 5, visibilityTimeoutSeconds: 120, maxReceiveCount: 5, timeoutSeconds: 60 },
  // Two at most (the lowest Lambda allows): each run paces its own broadcast; more would only add contention.
  { queue: 'broadcasts', handler: 'workers/broadcast', batchSize: 10, visibilityTimeoutSeconds: 120, maxReceiveCount: 5, timeoutSeconds: 60, maxConcurrency: 2 },
];

/**
 * Functions that run on a clock: an EventBridge rule each, deployed (infra/scheduling.ts); locally the stack's
 * clock runs the same modules at the same rate (infra/local/clock.ts).
 */
export interface Scheduled {
  handler: string;
  everyMinutes: number;
  timeoutSeconds: number;
}

export const scheduled: Scheduled[] = [
  // Re-publishes events whose publish was lost, and fails sends no answer ever settled.
  { handler: 'scheduled/outbox-sweep', everyMinutes: 1, timeoutSeconds: 60 },
];

export type { QueueName };
