/**
 * Body parsing. JSON routes: base64 decoding, a size cap, and a 400 `invalid_json` for anything that is
 * not JSON (a JSON body is taken whatever its Content-Type says: `fetch` sends a string as text/plain, curl's -d
 * as a form). Routes without a body refuse one that is not JSON the same way, and ignore a JSON one. Multipart routes (media upload): busboy through @middy/http-multipart-body-parser, with a
 * 400 `validation_error` for JSON or a broken form. The multipart parser is loaded on the first multipart request
 * (see shared/lang/on-first-use.ts): only the upload functions run it.
 */
import { isUtf8 } from 'node:buffer';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import { outsideJsonBounds } from '#shared/lang/json-bounds.ts';
import { ApiError, invalidJson, validationError } from '../errors.ts';
import { state } from '../state.ts';

export type BodyKind = 'json' | 'multipart' | 'none';

export const MAX_JSON_BYTES = 2 * 1024 * 1024;

const rawBytes = (event: APIGatewayProxyEventV2): Buffer | undefined => {
  if (event.body === undefined || event.body === null || event.body === '') return undefined;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
};

const contentType = (event: APIGatewayProxyEventV2) => (event.headers?.['content-type'] ?? '').toLowerCase();

/** The body's bytes, at most MAX_JSON_BYTES of them (413 past it). */
function cappedBytes(event: APIGatewayProxyEventV2): Buffer | undefined {
  const raw = rawBytes(event);
  if (raw && raw.length > MAX_JSON_BYTES) {
    throw new ApiError(413, { error: 'payload_too_large', message: `JSON bodies are limited to ${MAX_JSON_BYTES} bytes` });
  }
  return raw;
}

export const jsonBody = (): MiddlewareObj<APIGatewayProxyEventV2> => ({
  before: async (request) => {
    const raw = cappedBytes(request.event);
    if (!raw) return;
    const s = state(request.event);
    s.body = parseJson(raw, request.event);
    s.bodyProblem = outsideJsonBounds(s.body);
  },
});

function parseJson(raw: Buffer, event: APIGatewayProxyEventV2): unknown {
  const encoding = event.headers?.['content-encoding'];
  if (encoding && encoding.toLowerCase() !== 'identity') throw invalidJson(`Content-Encoding ${encoding} is not supported: send the JSON uncompressed`);
  // Decoded, bytes that are not UTF-8 would be stored as replacement characters.
  if (!isUtf8(raw)) throw invalidJson('The body is not UTF-8: JSON is sent in UTF-8');
  let parsed: unknown;
  try {
    // A leading byte order mark is not JSON; RFC 8259 lets a parser ignore it.
    parsed = JSON.parse(raw.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    const type = contentType(event).split(';')[0];
    throw invalidJson(type && !type.includes('json') ? `The body is not JSON (sent as ${type}); send JSON with Content-Type application/json` : undefined);
  }
  return parsed;
}

/** A route that takes no body: one sent anyway is ignored when it is JSON (`{}`), refused when it is not. */
export const unusedBody = (): MiddlewareObj<APIGatewayProxyEventV2> => ({
  before: async (request) => {
    const raw = cappedBytes(request.event);
    // Unused, but not unfit: a body past the JSON bounds is refused as on every route.
    if (raw && raw.toString('utf8').trim() !== '') state(request.event).bodyProblem = outsideJsonBounds(parseJson(raw, request.event));
  },
});

/**
 * No limit on the number of file parts for the parser itself: once busboy's `files` limit is reached it skips the
 * next file part, and a skipped part larger than its buffer stalls the parse for good (the request never answered).
 * The body is in memory already (6 MB in Lambda); a second file is refused before the parse instead (checkFormParts).
 */
const multipartParser = onFirstUse(async (): Promise<MiddlewareObj<any>> => {
  const { default: parser } = await import('@middy/http-multipart-body-parser');
  return parser({
    disableContentTypeError: false,
    // Its own check takes `boundary=` only as `; boundary=[A-Za-z0-9-]+`: a quoted one (.NET's HttpClient) or one with
    // the other characters RFC 2046 allows was refused. busboy reads any; multipartBody checks the type itself.
    disableContentTypeCheck: true,
    charset: 'utf-8',
    busboy: {
      // No file size limit here: the body is in memory already, and the handler's per-type check answers a file
      // too large with 413 media_too_large stating the type's maximum (a truncated part answered a bare parse error).
      limits: { fileSize: Infinity, files: Number.MAX_SAFE_INTEGER, fields: MAX_FORM_FIELDS },
      // The part named `file` is the file even without a filename (RFC 7578 makes it optional; some clients omit it).
      isPartAFile: (name: string | undefined, _type: string | undefined, filename: string | undefined) => filename !== undefined || name === 'file',
    },
  } as any);
});

/** The boundary a multipart Content-Type names, quoted or not (RFC 2046), as sent (it is case-sensitive). */
const boundaryOf = (event: APIGatewayProxyEventV2): string | undefined => {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(event.headers?.['content-type'] ?? '');
  return m ? (m[1] ?? m[2]) : undefined;
};

/**
 * Whether the form ends: its closing delimiter is there, on a line of its own. A form cut off inside a part makes
 * busboy emit an error on the part's stream, which the parser does not listen to: the process died (an uncaught
 * exception).
 */
const formIsComplete = (event: APIGatewayProxyEventV2): boolean => {
  const boundary = boundaryOf(event);
  const raw = rawBytes(event);
  return boundary !== undefined && raw !== undefined && (raw.includes(`\r\n--${boundary}--`) || raw.indexOf(`--${boundary}--`) === 0);
};

/** Fields a form may have besides its file (busboy's limit: past it, it would drop the rest without a word). */
const MAX_FORM_FIELDS = 20;

/**
 * The names of a complete form's parts, and whether each is a file (as the parser will take it: a filename, or the
 * name `file`), read from the part headers before the parse: the parser keeps the last of two parts of one name and
 * drops fields past its limit, both silently.
 */
function formParts(raw: Buffer, boundary: string): { name: string; file: boolean }[] {
  const delimiter = Buffer.from(`--${boundary}\r\n`);
  const parts: { name: string; file: boolean }[] = [];
  for (let at = raw.indexOf(delimiter); at !== -1; at = raw.indexOf(delimiter, at + delimiter.length)) {
    // Only a delimiter at the start of the body or of a line opens a part.
    if (at !== 0 && raw.toString('latin1', at - 2, at) !== '\r\n') continue;
    const start = at + delimiter.length;
    const end = raw.indexOf('\r\n\r\n', start);
    const headers = raw.toString('utf8', start, end === -1 ? Math.min(raw.length, start + 2048) : end);
    const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? /\bname=([^;\s]+)/i.exec(disposition)?.[1] ?? '';
    parts.push({ name, file: /\bfilename\*?=/i.test(disposition) || name === 'file' });
  }
  return parts;
}

/** Refuses what the parser would take silently: a name given twice, a field sent as a file, more fields than it keeps. */
function checkFormParts(event: APIGatewayProxyEventV2): void {
  const parts = formParts(rawBytes(event)!, boundaryOf(event)!);
  const seen = new Set<string>();
  for (const part of parts) {
    if (seen.has(part.name)) throw validationError({ [part.name]: ['is given more than once'] }, `The form field "${part.name}" is given more than once`);
    seen.add(part.name);
    if (part.file && part.name !== 'file') throw validationError({ [part.name]: ['must be a text field, not a file'] }, `The form field "${part.name}" must be a text field, not a file`);
  }
  if (parts.filter((p) => !p.file).length > MAX_FORM_FIELDS) {
    throw validationError({ _body: [`at most ${MAX_FORM_FIELDS} form fields besides the file`] }, `The form has more than ${MAX_FORM_FIELDS} fields`);
  }
}

/** The whole form is in memory: busboy parses it at once, and one it never finishes (a part header without its blank line) is malformed. */
const PARSE_TIMEOUT_MS = 2000;

export const multipartBody = (): MiddlewareObj<APIGatewayProxyEventV2> => ({
  before: async (request) => {
    const type = contentType(request.event);
    if (!type.startsWith('multipart/form-data')) {
      throw validationError({ file: ['Send the file as multipart/form-data with fields "file" and "type"'] }, 'Media upload requires multipart/form-data');
    }
    if (!formIsComplete(request.event)) {
      throw validationError({ _body: ['the form has no boundary, or ends before its closing delimiter'] }, 'The multipart form could not be parsed');
    }
    checkFormParts(request.event);
    const parser = await multipartParser();
    try {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the form never ends (a part header without the blank line after it?)')), PARSE_TIMEOUT_MS);
      });
      await Promise.race([(parser.before as any)(request), stalled]).finally(() => clearTimeout(timer));
    } catch (err) {
      throw validationError({ _body: [(err as Error).message || 'Malformed multipart body'] }, 'The multipart form could not be parsed');
    }
    state(request.event).body = request.event.body;
  },
});
