/**
 * The contract's media table (Limits: media sizes and formats): which detected MIME types each media
 * type accepts and its maximum size. One place, used by the upload, the presigned path and the send path.
 */
export const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

const MB = 1024 * 1024;

export const MIME = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  mp4: 'video/mp4',
  threeGpp: 'video/3gpp',
  aac: 'audio/aac',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  amr: 'audio/amr',
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  txt: 'text/plain',
} as const;

export interface MediaRule {
  /** MIME types accepted for the type (as detected from the bytes). */
  mimeTypes: readonly string[];
  maxBytes: number;
  /** The maximum as the contract writes it. */
  maxLabel: string;
}

export const MEDIA_RULES: Record<MediaType, MediaRule> = {
  image: { mimeTypes: [MIME.jpeg, MIME.png, MIME.webp], maxBytes: 5 * MB, maxLabel: '5 MB' },
  video: { mimeTypes: [MIME.mp4, MIME.threeGpp], maxBytes: 16 * MB, maxLabel: '16 MB' },
  // AAC also arrives in an MP4 (M4A) container; the upstream accepts it as audio/mp4.
  audio: { mimeTypes: [MIME.aac, MIME.m4a, MIME.mp3, MIME.opus, MIME.amr], maxBytes: 16 * MB, maxLabel: '16 MB' },
  document: {
    mimeTypes: [MIME.pdf, MIME.doc, MIME.docx, MIME.xls, MIME.xlsx, MIME.ppt, MIME.pptx, MIME.txt],
    maxBytes: 100 * MB,
    maxLabel: '100 MB',
  },
  sticker: { mimeTypes: [MIME.webp], maxBytes: 500 * 1024, maxLabel: '500 KB' },
};

/** The `limits` object of a `media_too_large` reply: the contract's four sendable-by-size types, as strings. */
export const LIMITS_AS_STRINGS = {
  image: MEDIA_RULES.image.maxLabel,
  video: MEDIA_RULES.video.maxLabel,
  audio: MEDIA_RULES.audio.maxLabel,
  document: MEDIA_RULES.document.maxLabel,
} as const;

/** The proxy limit: the most the service downloads on the upstream's behalf (Limits: automatic proxy for URL media). */
export const PROXY_LIMIT_BYTES = 5 * MB;

export const isMediaType = (s: unknown): s is MediaType => typeof s === 'string' && (MEDIA_TYPES as readonly string[]).includes(s);

export const allowedList = (type: MediaType): string => MEDIA_RULES[type].mimeTypes.join(', ');

/** File name extension for a MIME type (names objects and documents made by a conversion). */
export const extensionOf = (mime: string): string =>
  ({
    [MIME.jpeg]: 'jpg', [MIME.png]: 'png', [MIME.webp]: 'webp', [MIME.mp4]: 'mp4', [MIME.threeGpp]: '3gp',
    [MIME.aac]: 'aac', [MIME.m4a]: 'm4a', [MIME.mp3]: 'mp3', [MIME.opus]: 'ogg', [MIME.amr]: 'amr',
    [MIME.pdf]: 'pdf', [MIME.doc]: 'doc', [MIME.docx]: 'docx', [MIME.xls]: 'xls', [MIME.xlsx]: 'xlsx',
    [MIME.ppt]: 'ppt', [MIME.pptx]: 'pptx', [MIME.txt]: 'txt',
  })[mime] ?? 'bin';
