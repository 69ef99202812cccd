/**
 * What a file really is, from its bytes (file-type's magic numbers), never from its name or declared MIME.
 * Two cases file-type leaves open are settled here: plain text (no magic number) and the legacy Office
 * formats, which share one container (OLE2/CFB) and are told apart by the name the client gave. file-type
 * (and the tokenizer under it) is loaded on the first file checked, not at cold start.
 */
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import { MIME } from './formats.ts';

const fileType = onFirstUse(() => import('file-type'));

export interface Detected {
  /** Normalised MIME type (parameters dropped; OGG is only reported when it carries Opus). */
  mime: string;
  /** Set for OGG: whether the stream is Opus (the only OGG the upstream accepts, shown as a voice note). */
  opus?: boolean;
}

const LEGACY_OFFICE: Record<string, string> = { doc: MIME.doc, xls: MIME.xls, ppt: MIME.ppt, dot: MIME.doc, xlt: MIME.xls, pps: MIME.ppt };

/** Heuristic for text: valid UTF-8 without NUL or most control bytes in the first 64 KB. */
function looksLikeText(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 64 * 1024);
  if (sample.length === 0) return false;
  for (const b of sample) {
    if (b === 0) return false;
    if (b < 0x09 || (b > 0x0d && b < 0x20 && b !== 0x1b)) return false;
  }
  try {
    // A multi-byte character cut at the sample's end is fine: decode without the last 3 bytes then.
    new TextDecoder('utf-8', { fatal: true }).decode(sample.length === bytes.length ? sample : sample.subarray(0, sample.length - 3));
    return true;
  } catch {
    return false;
  }
}

export async function detectMime(bytes: Uint8Array, filename?: string): Promise<Detected | undefined> {
  const found = await (await fileType()).fileTypeFromBuffer(bytes);
  if (!found) return looksLikeText(bytes) ? { mime: MIME.txt } : undefined;
  const [base, params = ''] = found.mime.split(';').map((s) => s.trim());
  if (base === 'audio/ogg' || base === 'audio/opus') return { mime: MIME.opus, opus: params.includes('opus') || found.ext === 'opus' };
  if (base === 'audio/x-m4a' || base === 'audio/m4a') return { mime: MIME.m4a };
  if (base === 'application/x-cfb') {
    const ext = filename?.split('.').pop()?.toLowerCase() ?? '';
    return { mime: LEGACY_OFFICE[ext] ?? 'application/x-cfb' };
  }
  return { mime: base! };
}
