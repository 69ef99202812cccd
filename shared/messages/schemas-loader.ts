/**
 * The send request's schemas (schemas.ts and schema/), loaded on the first request a container validates: building
 * the valibot schemas of every message type is the largest part of the send path's own work at load, and a cold
 * start of a function that sends need not wait for it.
 */
import { onFirstUse } from '#shared/lang/on-first-use.ts';

export const loadSendSchemas = onFirstUse(() => import('./schemas.ts'));
