/**
 * A file the service's media rules refused, reported as the upstream would report the same file (its Graph code,
 * `upstreamCodeOf`): the send path's take-over and the retry fail a message with it as with any upstream refusal.
 * Not transient: the same file is refused again.
 */
import type { ApiError } from '#shared/http/errors.ts';
import { UpstreamError } from '#shared/upstream/client.ts';
import { upstreamCodeOf } from './errors.ts';

export const upstreamRefusal = (err: ApiError): UpstreamError => new UpstreamError(err.message, err.status, upstreamCodeOf(err), err.message, false);
