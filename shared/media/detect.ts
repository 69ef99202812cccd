/**
 * What a file really is, from its bytes (file-type's magic numbers), never from its declared MIME.
 * Cases file-type leaves open are settled here: plain text (no magic number; UTF-16's byte-order mark is no MPEG frame); the legacy Office formats, which
 * share one container (OLE2/CFB) and are told apart by their main stream's name, or else by the name the client
 * gave; and an MP4 with sound tracks only, which is audio (an AAC recording saved as .mp4), not video. file-type
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

/** The stream each legacy Office format keeps its content in, named (UTF-16LE) in the container's directory. */
const OFFICE_STREAMS: [string, string][] = [['WordDocument', MIME.doc], ['Workbook', MIME.xls], ['Book', MIME.xls], ['PowerPoint Document', MIME.ppt]];

function legacyOffice(bytes: Uint8Array, filename?: string): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // A directory entry's name is followed by its NUL terminator, so "Book" does not match inside another name.
  const byStream = OFFICE_STREAMS.find(([name]) => buffer.includes(Buffer.from(`${name}\0`, 'utf16le')));
  if (byStream) return byStream[1];
  const ext = filename?.split('.').pop()?.toLowerCase() ?? '';
  return LEGACY_OFFICE[ext] ?? 'application/x-cfb';
}

/** The handler types of an MP4's tracks (`vide`, `soun`, ...), read from their `hdlr` boxes wherever the index is. */
function mp4TrackKinds(bytes: Uint8Array): Set<string> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kinds = new Set<string>();
  // hdlr: size, 'hdlr', version and flags, pre_defined, then the handler type.
  for (let at = buffer.indexOf('hdlr'); at !== -1 && at + 16 <= buffer.length; at = buffer.indexOf('hdlr', at + 4)) {
    kinds.add(buffer.toString('latin1', at + 12, at + 16));
  }
  return kinds;
}

/** A control character no text holds (tab, line breaks, form feed and escape are text). */
const isControl = (c: number) => c < 0x09 || (c > 0x0d && c < 0x20 && c !== 0x1b);

/**
 * Heuristic for text, in the first 64 KB: no NUL or other control character, in UTF-8 or any other character set (a CSV
 * exported from Windows is Windows-1252, Japanese may be Shift-JIS), or UTF-16 after its byte-order mark.
 */
function looksLikeText(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 64 * 1024);
  if (sample.length === 0) return false;
  const utf16 = utf16Encoding(sample);
  if (utf16) {
    try {
      // Streamed: a character cut at the sample's end is left undecoded, not an error.
      const text = new TextDecoder(utf16, { fatal: true }).decode(sample.subarray(2), { stream: sample.length < bytes.length });
      return ![...text].some((ch) => isControl(ch.codePointAt(0)!));
    } catch {
      return false;
    }
  }
  // UTF-8, or another character set (Windows-1252 or -1251, ISO-8859-x, Shift-JIS, GBK, TIS-620): which one cannot be
  // told from the bytes, and text in any of them has no control characters, as almost no binary format goes 64 KB without.
  return !sample.some(isControl);
}

/** UTF-16's byte-order marks (FF FE little-endian, FE FF big-endian), which file-type reads as an MPEG audio frame. */
const utf16Encoding = (bytes: Uint8Array): 'utf-16le' | 'utf-16be' | undefined =>
  bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : undefined;

export async function detectMime(bytes: Uint8Array, filename?: string): Promise<Detected | undefined> {
  // A byte-order mark is no audio frame when UTF-16 text follows it.
  if (utf16Encoding(bytes) && looksLikeText(bytes)) return { mime: MIME.txt };
  const found = await (await fileType()).fileTypeFromBuffer(bytes);
  if (!found) return looksLikeText(bytes) ? { mime: MIME.txt } : undefined;
  const [base, params = ''] = found.mime.split(';').map((s) => s.trim());
  if (base === 'audio/ogg' || base === 'audio/opus') return { mime: MIME.opus, opus: params.includes('opus') || found.ext === 'opus' };
  if (base === 'audio/x-m4a' || base === 'audio/m4a') return { mime: MIME.m4a };
  if (base === 'application/x-cfb') return { mime: legacyOffice(bytes, filename) };
  if (base === MIME.mp4) {
    const kinds = mp4TrackKinds(bytes);
    if (kinds.has('soun') && !kinds.has('vide')) return { mime: MIME.m4a };
  }
  return { mime: base! };
}
