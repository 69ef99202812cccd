/**
 * What a media link is before sending it: its size and type from a HEAD request (SSRF-safe, short
 * timeout). The size decides whether the contract's size rules apply; an unanswered probe leaves the
 * decision to the upstream (and to the proxy fallback).
 */
import { ApiError } from '#shared/http/errors.ts';
import { BlockedAddressError, ResponseTooLargeError, safeFetch, SafeFetchError } from '#shared/net/safe-fetch.ts';

export interface LinkProbe {
  size?: number;
  mimeType?: string;
}

const PROBE_TIMEOUT_MS = 3_000;

export async function probeLink(link: string): Promise<LinkProbe> {
  try {
    const res = await safeFetch(link, { method: 'HEAD', maxBytes: 0, followRedirects: 5, timeoutMs: PROBE_TIMEOUT_MS });
    const mimeType = res.headers['content-type']?.split(';')[0]?.trim().toLowerCase() || undefined;
    const size = res.status >= 200 && res.status < 300 ? lengthOf(res.headers['content-length']) : undefined;
    if (size !== undefined) return { size, mimeType };
    // Some servers answer only GET, or HEAD without a length: ask for the first byte and read the total.
    return { size: await sizeByGet(link), ...(res.status >= 200 && res.status < 300 && mimeType ? { mimeType } : {}) };
  } catch (err) {
    if (err instanceof BlockedAddressError) throw invalidLink(link, err.message);
    if (err instanceof SafeFetchError && err.code === 'invalid_url') throw invalidLink(link, err.message);
    return {};
  }
}

const lengthOf = (header: string | undefined): number | undefined => {
  const n = Number(header);
  return header !== undefined && header !== '' && Number.isFinite(n) && n >= 0 ? n : undefined;
};

/** The size from a one-byte ranged GET: the total of `Content-Range`, or the announced length of a full answer. */
async function sizeByGet(link: string): Promise<number | undefined> {
  try {
    const res = await safeFetch(link, { headers: { range: 'bytes=0-0' }, maxBytes: 1, followRedirects: 5, timeoutMs: PROBE_TIMEOUT_MS });
    if (res.status === 206) return lengthOf(/\/(\d+)\s*$/.exec(res.headers['content-range'] ?? '')?.[1]);
    return res.status >= 200 && res.status < 300 ? res.body.length : undefined;
  } catch (err) {
    // A full answer larger than the byte asked for stops at its announced length.
    if (err instanceof ResponseTooLargeError) return err.announcedBytes;
    return undefined;
  }
}

export const invalidLink = (link: string, reason: string) =>
  new ApiError(400, { error: 'invalid_media_link', message: `The media link cannot be used: ${reason}`, link });
