/** How the stack names things derived from handler modules and queues (one place for the casing rules). */

/** `http/meta/docs-asset` → `HttpMetaDocsAsset`: construct ids. */
export const pascal = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean).map((p) => p[0].toUpperCase() + p.slice(1)).join('');

/** `webhook-deliveries` → `QUEUE_URL_WEBHOOK_DELIVERIES`: the setting a function reads a queue's URL from. */
export const queueUrlSetting = (queue: string) => `QUEUE_URL_${queue.toUpperCase().replace(/-/g, '_')}`;
