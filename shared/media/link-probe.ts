/**
 * What a media link is before sending it: its size and type from a HEAD request (SSRF-safe, short
 * timeout). The size decides whether the contract's size rules apply; an unanswered probe leaves the
 * decision to the upstream (and to the proxy fallback).
 */
import { ApiError } from '#shared/http/errors.ts';
import { BlockedAddressError, safeFetch, SafeFetchError } from '#shared/net/safe-fetch.ts';

export interface LinkProbe {
  size?: number;
  mimeType?: string;
}

const PROBE_TIMEOUT_MS = 3_000;

export async function probeLink(link: string): Promise<LinkProbe> {
  try {
    const res = await safeFetch(link, { method: 'HEAD', maxBytes: 0, followRedirects: 5, timeoutMs: PROBE_TIMEOUT_MS });
    if (res.status < 200 || res.status >= 300) return {};
    const size = Number(res.headers['content-length']);
    const mimeType = res.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    return { size: Number.isFinite(size) && res.headers['content-length'] !== undefined ? size : undefined, mimeType: mimeType || undefined };
  } catch (err) {
    if (err instanceof BlockedAddressError) throw invalidLink(link, err.message);
    if (err instanceof SafeFetchError && err.code === 'invalid_url') throw invalidLink(link, err.message);
    return {};
  }
}

export const invalidLink = (link: string, reason: string) =>
  new ApiError(400, { error: 'invalid_media_link', message: `The media link cannot be used: ${reason}`, link });
