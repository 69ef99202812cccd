/**
 * Media in sends: the contract's size and format rules (Media messages, the autoConvert table, the proxy).
 *
 * `planMediaSend` runs in the send endpoint and decides cheaply (a HEAD on links, a record read for ids):
 * send as is, send a too-large video as a document by link, refuse with 413, or hand the file to the
 * media worker, whose part is shared/media/process-media.ts. This module stays free of sharp and
 * ffmpeg: the send endpoint bundles it, and only the media worker carries the native libraries.
 */
import { basename } from 'node:path';
import { ApiError } from '#shared/http/errors.ts';
import { extensionOf, MEDIA_RULES, MIME, type MediaType } from './formats.ts';
import { mediaTooLarge, sizeOver } from './errors.ts';
import { requireAccessibleMediaId, requireUsableAs } from './media-id.ts';
import { captionable, upstreamObject, type MediaObject, type UpstreamMediaObject } from './upstream-object.ts';

export type { MediaObject } from './upstream-object.ts';
import { probeLink } from './link-probe.ts';


export interface MediaSendRequest {
  type: MediaType;
  media: MediaObject;
  autoConvert?: boolean;
}

/** `data.metadata` of the Send result when a file went out as a document. */
export interface ConversionMetadata {
  originalType: MediaType;
  wasConverted: true;
  reason: string;
}

export type MediaAction = 'as_is' | 'proxied' | 'compressed' | 'converted_to_mp3' | 'voice_note' | 'sent_as_document';

/** What to put in the upstream payload instead of the request's media object. */
export interface PreparedMedia {
  /** The message type to send (`document` after a conversion to a document). */
  type: MediaType;
  media: UpstreamMediaObject;
  metadata?: ConversionMetadata;
  action: MediaAction;
}

/** Why a file goes to the media worker. */
export type MediaJobReason = 'proxy' | 'compress' | 'convert' | 'voice' | 'measure';

export type MediaPlan = { kind: 'ready'; prepared: PreparedMedia } | { kind: 'job'; reason: MediaJobReason };

/** The most the service downloads for a conversion: the largest file any type may become (a document). */
export const DOWNLOAD_CAP_BYTES = MEDIA_RULES.document.maxBytes;


const ready = (prepared: PreparedMedia): MediaPlan => ({ kind: 'ready', prepared });
const job = (reason: MediaJobReason): MediaPlan => ({ kind: 'job', reason });

/** A file name for a document made from another type: the client's, the link's, or `<type>.<ext>`. */
export function documentName(req: MediaSendRequest, mime?: string): string {
  if (req.media.filename) return req.media.filename;
  if (req.media.link) {
    try {
      const name = basename(decodeURIComponent(new URL(req.media.link).pathname));
      if (name && name.includes('.')) return name.slice(0, 240);
    } catch {
      /* fall through */
    }
  }
  return `${req.type}.${mime ? extensionOf(mime) : 'bin'}`;
}

/** The file goes out unchanged as a document by its link (the upstream fetches documents up to 100 MB). */
export function asDocumentByLink(req: MediaSendRequest, reason: string, mime?: string): PreparedMedia {
  const media: PreparedMedia['media'] = { link: req.media.link, filename: documentName(req, mime) };
  if (req.media.caption !== undefined && captionable(req.type)) media.caption = req.media.caption;
  return { type: 'document', media, metadata: { originalType: req.type, wasConverted: true, reason }, action: 'sent_as_document' };
}

/** Decides what a media send needs, without touching the file's bytes. Throws 413/400 where the answer is already known. */
export async function planMediaSend(businessId: string, phoneNumberId: string, req: MediaSendRequest): Promise<MediaPlan> {
  const { type, media } = req;
  const wantsVoice = type === 'audio' && media.voice === true;
  if (media.id !== undefined) {
    // Another business's id (or one the sending number cannot use) is a 403 before anything is recorded or sent.
    const check = await requireAccessibleMediaId(businessId, phoneNumberId, media.id);
    if (check.known) requireUsableAs(type, media.id, check.record);
    if (wantsVoice && check.known && check.record.mimeType !== MIME.opus) return job('voice');
    return ready({ type, media: upstreamObject(type, media), action: 'as_is' });
  }

  const probe = await probeLink(media.link!);
  const rule = MEDIA_RULES[type];
  if (probe.size !== undefined && probe.size > rule.maxBytes) return planOversize(req, probe.size, probe.mimeType);
  if (wantsVoice && probe.mimeType !== MIME.opus) return job('voice');
  return ready({ type, media: upstreamObject(type, media), action: 'as_is' });
}

function planOversize(req: MediaSendRequest, size: number, mime?: string): MediaPlan {
  const { type } = req;
  const autoConvert = req.autoConvert === true;
  // Nothing becomes larger than a document may be.
  if (size > DOWNLOAD_CAP_BYTES || type === 'document' || type === 'sticker') throw mediaTooLarge(type, size);
  // Images by link are always compressed (contract: "an image sent by link above 5 MB is ... compressed").
  if (type === 'image') return job('compress');
  if (!autoConvert) throw mediaTooLarge(type, size);
  if (type === 'video') return ready(asDocumentByLink(req, `video of ${sizeOver(size, '16 MB')} is over the 16 MB video limit; sent unchanged as a document`, mime));
  return job('convert');
}

/**
 * What to do when the upstream refused a media link: 131052 (could not download it) → the service
 * proxies the file; 131053 (too large) → the worker measures and applies the size rules.
 */
export function planAfterUpstreamError(code: number | undefined, req: MediaSendRequest): MediaPlan | undefined {
  if (req.media.link === undefined) return undefined;
  if (code === 131052) return job('proxy');
  if (code === 131053) return job('measure');
  return undefined;
}

export const mediaDownloadFailed = (reason: string) =>
  new ApiError(400, {
    error: 'media_download_failed',
    code: '131052',
    message: `The media file could not be downloaded: ${reason}`,
    action_required: 'Use a public URL the service can reach (at most 5 MB when proxied) or upload the file with POST /media/v1',
  });
