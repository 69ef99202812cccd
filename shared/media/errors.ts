/** The media area's client errors, as the contract words them (Errors: media_too_large, MEDIA_PERMISSION_DENIED). */
import { ApiError } from '#shared/http/errors.ts';
import { allowedList, LIMITS_AS_STRINGS, MEDIA_RULES, MEDIA_TYPES, type MediaType } from './formats.ts';

export const formatBytes = (n: number): string =>
  n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} bytes`;

/** A size beside a limit it is over: in exact bytes when the rounded figure would read as the limit itself. */
export const sizeOver = (n: number, maxLabel: string): string => (formatBytes(n).replace('.0 ', ' ') === maxLabel ? `${n.toLocaleString('en-US')} bytes` : formatBytes(n));

export const unsupportedFormat = (type: MediaType, detected: string | undefined, detail?: string) =>
  new ApiError(400, {
    error: 'unsupported_media_type',
    message:
      `${detail ?? `This file is ${detected ?? 'of an unrecognised format'}`}. ` +
      `Allowed MIME types for ${type}: ${allowedList(type)}`,
    allowed_mime_types: [...MEDIA_RULES[type].mimeTypes],
    ...(detected ? { detected_mime_type: detected } : {}),
  });

/** Upload over the type's maximum (the upload endpoints). */
export const uploadTooLarge = (type: MediaType, size: number) =>
  new ApiError(413, {
    error: 'media_too_large',
    message: `The maximum size for ${type} files is ${MEDIA_RULES[type].maxLabel}; this file is ${sizeOver(size, MEDIA_RULES[type].maxLabel)}`,
    suggestion:
      type === 'document'
        ? 'Split or compress the document'
        : type === 'sticker'
          ? 'Reduce the sticker to at most 500 KB (a 512x512 WebP is recommended)'
          : type === 'video'
            ? 'Compress the video, or send it by link with autoConvert: true to let the service send it as a document'
            : 'Compress the file, or send it by link with autoConvert: true to let the service compress it or send it as a document',
    limits: LIMITS_AS_STRINGS,
    max_bytes: MEDIA_RULES[type].maxBytes,
  });

/** A media send over the type's limit with autoConvert off (or still over after the allowed processing). */
export const mediaTooLarge = (type: MediaType, size: number | undefined, detail?: string) =>
  new ApiError(413, {
    error: 'media_too_large',
    message:
      `The ${type} is ${size === undefined ? 'larger than' : `${sizeOver(size, MEDIA_RULES[type].maxLabel)}, over`} the ${MEDIA_RULES[type].maxLabel} limit for ${type}` +
      (detail ? ` (${detail})` : ''),
    suggestion:
      type === 'document'
        ? 'Documents are limited to 100 MB: split or compress the file'
        : type === 'sticker'
          ? 'Stickers are limited to 500 KB and are not converted: reduce the file (a 512x512 WebP is recommended)'
          : size !== undefined && size > MEDIA_RULES.document.maxBytes
            // Converting cannot help: the file is over the largest limit of all, a document's.
            ? `The file is over ${MEDIA_RULES.document.maxLabel}, the limit of a document too, so it cannot be sent converted either: reduce the file size`
            : `Set autoConvert to true to let the service ${type === 'image' ? 'compress the image or ' : type === 'audio' ? 'compress the audio or ' : ''}send it as a document, or reduce the file size`,
    limits: LIMITS_AS_STRINGS,
  });

export const messagingNotConfigured = () =>
  new ApiError(400, {
    error: 'messaging_not_configured',
    message: 'This business has no messaging account (phone number id) configured; configure it before uploading media',
  });

export const mediaExpired = (mediaId: string, expiresAt: string) =>
  new ApiError(400, {
    error: 'media_expired',
    message: `Media id ${mediaId} expired at ${expiresAt} (media ids are valid for about 30 days); upload the file again with POST /media/v1`,
  });

/** The contract's 403 (`forbidden`: the resource belongs to another account) with its code and hint. */
export const mediaPermissionDenied = (mediaId: string) =>
  new ApiError(403, {
    error: 'forbidden',
    code: 'MEDIA_PERMISSION_DENIED',
    message: `Media id ${mediaId} is not accessible with the credentials of the sending number`,
    hint: 'Upload the file with POST /media/v1 using an API key of this business (media ids belong to the number that uploaded them), or send the header by public url',
  });

export const unknownMediaType = (value: unknown) =>
  new ApiError(400, {
    error: 'validation_error',
    message: `type must be one of: ${MEDIA_TYPES.join(', ')}`,
    details: { type: [`Expected one of ${MEDIA_TYPES.join(', ')}, got ${JSON.stringify(value ?? null)}`] },
  });

/**
 * The Cloud API's code for a file the service's media rules refused (Upstream delivery codes): what the upstream answers
 * for the same file, so that a failure is reported alike whether the service or the upstream found it. Undefined for
 * an error no upstream code describes.
 */
export const upstreamCodeOf = (err: ApiError): number | undefined =>
  ({ media_too_large: 131053, unsupported_media_type: 131051, media_download_failed: 131052 } as Record<string, number>)[String(err.body.error)];
