/**
 * The media worker's part of a media send: download (SSRF-safe, size-capped while streaming), detect,
 * apply the contract's rules (image ladder, MP3 64 kbps mono, voice notes, documents), and upload to the
 * upstream media store. Only the media worker imports this module (it pulls in sharp and ffmpeg).
 */
import { ApiError } from '#shared/http/errors.ts';
import { logger } from '#shared/log/logger.ts';
import { BlockedAddressError, ResponseTooLargeError, safeFetch, SafeFetchError } from '#shared/net/safe-fetch.ts';
import { detectMime, type Detected } from './detect.ts';
import { extensionOf, MEDIA_RULES, MIME, PROXY_LIMIT_BYTES, type MediaType } from './formats.ts';
import { formatBytes, mediaTooLarge, sizeOver, unsupportedFormat } from './errors.ts';
import { checkMediaId } from './media-id.ts';
import { invalidLink } from './link-probe.ts';
import { getObject } from './storage.ts';
import { captionable, upstreamObject, voiceFlag } from './upstream-object.ts';
import { storeMedia } from './upload-service.ts';
import { compressImage, UndecodableImageError } from './convert/image-ladder.ts';
import { ConversionError, mp3SizeAt64k, probeDurationSeconds, toMp3Mono64k, toVoiceNote } from './convert/ffmpeg.ts';
import {
  asDocumentByLink, documentName, DOWNLOAD_CAP_BYTES, mediaDownloadFailed,
  type MediaAction, type MediaJobReason, type MediaSendRequest, type PreparedMedia,
} from './send-media.ts';

const DOWNLOAD_TIMEOUT_MS = 60_000;

async function download(req: MediaSendRequest, reason: MediaJobReason): Promise<Buffer> {
  const cap = reason === 'proxy' ? PROXY_LIMIT_BYTES : DOWNLOAD_CAP_BYTES;
  let res;
  try {
    res = await safeFetch(req.media.link!, { maxBytes: cap, followRedirects: 5, timeoutMs: DOWNLOAD_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof ResponseTooLargeError) {
      if (reason === 'proxy') throw mediaDownloadFailed(`the file is larger than the ${formatBytes(PROXY_LIMIT_BYTES)} proxy limit`);
      throw mediaTooLarge(req.type, err.announcedBytes, `downloads are limited to ${formatBytes(cap)}`);
    }
    if (err instanceof BlockedAddressError || (err instanceof SafeFetchError && err.code === 'invalid_url')) throw invalidLink(req.media.link!, err.message);
    throw mediaDownloadFailed((err as Error).message);
  }
  if (res.status < 200 || res.status >= 300) throw mediaDownloadFailed(`the link answered HTTP ${res.status}`);
  return res.body;
}

const isAllowed = (type: MediaType, d: Detected | undefined) =>
  d !== undefined && MEDIA_RULES[type].mimeTypes.includes(d.mime) && (d.mime !== MIME.opus || d.opus === true);

/** The media worker's part: bytes → the contract's rules → an upstream media id (or a document link). */
export async function processMediaSend(businessId: string, phoneNumberId: string, req: MediaSendRequest, reason: MediaJobReason): Promise<PreparedMedia> {
  const { type } = req;
  const rule = MEDIA_RULES[type];
  const autoConvert = req.autoConvert === true;

  let bytes: Buffer;
  if (req.media.id !== undefined) {
    const check = await checkMediaId(businessId, req.media.id);
    if (!check.known) return { type, media: upstreamObject(type, req.media), action: 'as_is' };
    bytes = await getObject(check.record.s3Key);
  } else {
    bytes = await download(req, reason);
  }
  let detected = await detectMime(bytes, req.media.filename);
  let action: MediaAction = reason === 'proxy' ? 'proxied' : 'as_is';
  const originalSize = bytes.length;

  try {
    if (type === 'audio' && req.media.voice === true && !(detected?.mime === MIME.opus && detected.opus)) {
      bytes = await toVoiceNote(bytes);
      detected = { mime: MIME.opus, opus: true };
      action = 'voice_note';
    }

    if (bytes.length > rule.maxBytes) {
      if (type === 'image') {
        // Over the limit and not an image that can be compressed: the size rule answers (413, or a document with autoConvert).
        if (!detected?.mime.startsWith('image/')) {
          if (!autoConvert) throw mediaTooLarge(type, originalSize, 'the file is not an image that can be compressed');
          return documentFromDownload(businessId, phoneNumberId, req, bytes, detected, `file of ${sizeOver(originalSize, '5 MB')} is over the 5 MB image limit and cannot be compressed as an image; sent unchanged as a document`);
        }
        const ladder = await compressImage(bytes, rule.maxBytes).catch((err) => {
          if (!(err instanceof UndecodableImageError)) throw err;
          return undefined;
        });
        if (!ladder) {
          // Declared an image but not one that decodes (corrupt or truncated): as for any file that is no image.
          if (!autoConvert) throw mediaTooLarge(type, originalSize, 'the file could not be decoded as an image to compress');
          return documentFromDownload(businessId, phoneNumberId, req, bytes, detected, `file of ${sizeOver(originalSize, '5 MB')} is over the 5 MB image limit and could not be decoded to compress it; sent unchanged as a document`);
        }
        if (ladder.fits) {
          return await upload(businessId, phoneNumberId, req, type, ladder.bytes, ladder.mimeType, 'compressed');
        }
        const why = `image of ${formatBytes(originalSize)} is still ${sizeOver(ladder.bytes.length, '5 MB')} after compression at quality 85, 70 and 50, over the 5 MB image limit`;
        if (!autoConvert) throw mediaTooLarge(type, originalSize, 'still over the limit after compression at quality 85, 70 and 50');
        return documentFromDownload(businessId, phoneNumberId, req, bytes, detected, why);
      }
      if (!autoConvert || type === 'document' || type === 'sticker') throw mediaTooLarge(type, originalSize);
      if (type === 'video') {
        return documentFromDownload(businessId, phoneNumberId, req, bytes, detected, `video of ${sizeOver(originalSize, '16 MB')} is over the 16 MB video limit; sent unchanged as a document`);
      }
      // audio: when the duration already says MP3 64k will not fit, skip the conversion.
      const seconds = await probeDurationSeconds(bytes);
      if (seconds !== undefined && mp3SizeAt64k(seconds) > rule.maxBytes) {
        return documentFromDownload(
          businessId, phoneNumberId, req, bytes, detected,
          `audio of ${formatBytes(originalSize)} (${Math.round(seconds)} s) would still be about ${formatBytes(mp3SizeAt64k(seconds))} as MP3 64 kbps mono, over the 16 MB audio limit`,
        );
      }
      let mp3: Buffer;
      try {
        mp3 = await toMp3Mono64k(bytes);
      } catch (err) {
        if (!(err instanceof ConversionError)) throw err;
        // Not audio ffmpeg can compress: still over the limit, so it goes as a document (the autoConvert table).
        return documentFromDownload(
          businessId, phoneNumberId, req, bytes, detected,
          `file of ${sizeOver(originalSize, '16 MB')} is over the 16 MB audio limit and cannot be compressed as audio; sent unchanged as a document`,
        );
      }
      if (mp3.length <= rule.maxBytes) return await upload(businessId, phoneNumberId, req, type, mp3, MIME.mp3, 'converted_to_mp3');
      return documentFromDownload(
        businessId, phoneNumberId, req, bytes, detected,
        `audio of ${formatBytes(originalSize)} is still ${formatBytes(mp3.length)} after compression to MP3 64 kbps mono, over the 16 MB audio limit`,
      );
    }

    if (!isAllowed(type, detected)) {
      // With autoConvert, a well-formed file in another format becomes one the upstream accepts.
      if (autoConvert && type === 'audio' && detected?.mime.startsWith('audio/')) {
        return await upload(businessId, phoneNumberId, req, type, await toMp3Mono64k(bytes), MIME.mp3, 'converted_to_mp3');
      }
      if (autoConvert && type === 'image' && detected?.mime.startsWith('image/')) {
        const ladder = await compressImage(bytes, rule.maxBytes);
        return await upload(businessId, phoneNumberId, req, type, ladder.bytes, ladder.mimeType, 'compressed');
      }
      throw unsupportedFormat(type, detected?.mime);
    }
    return await upload(businessId, phoneNumberId, req, type, bytes, detected!.mime, action);
  } catch (err) {
    if (err instanceof ConversionError) {
      throw new ApiError(400, { error: 'media_conversion_failed', message: `The ${type} could not be converted: ${err.message}` });
    }
    if (err instanceof UndecodableImageError) {
      throw unsupportedFormat(type, detected?.mime, 'The image could not be decoded');
    }
    throw err;
  }
}

async function upload(
  businessId: string, phoneNumberId: string, req: MediaSendRequest, type: MediaType, bytes: Uint8Array, mimeType: string, action: MediaAction,
): Promise<PreparedMedia> {
  const filename = type === 'document' ? documentName(req, mimeType) : `${type}.${extensionOf(mimeType)}`;
  const stored = await storeMedia(businessId, phoneNumberId, { type, bytes, mimeType, filename });
  const media: PreparedMedia['media'] = { id: stored.media_id, ...voiceFlag(type, req.media) };
  if (req.media.caption !== undefined && captionable(type)) media.caption = req.media.caption;
  if (type === 'document') media.filename = filename;
  logger.info('media prepared', { action, type, mimeType, bytes: bytes.length });
  return { type, media, action };
}

/**
 * A file that goes out as a document. By link when the upstream can fetch it (it takes documents up to
 * 100 MB); a proxied file (the upstream could not fetch its link) is uploaded instead.
 */
async function documentFromDownload(
  businessId: string, phoneNumberId: string, req: MediaSendRequest, bytes: Buffer, detected: Detected | undefined, reason: string,
): Promise<PreparedMedia> {
  if (req.media.link !== undefined) return asDocumentByLink(req, reason, detected?.mime);
  const prepared = await upload(businessId, phoneNumberId, { ...req, type: 'document' }, 'document', bytes, 'application/octet-stream', 'sent_as_document');
  return { ...prepared, metadata: { originalType: req.type, wasConverted: true, reason } };
}
