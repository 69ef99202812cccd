/**
 * A media message's object as the Cloud API takes it: `id` or `link`, the caption where the type shows one, the
 * filename of a document, and the voice-message flag of an audio. One rule for the send path's payload and for the
 * media steps that replace the object (shared/media/send-media.ts, process-media.ts).
 */
import type { MediaType } from './formats.ts';

/** The media object of a send request (`voice`: Meta's voice-message flag for audio, which also has the file converted to OGG/Opus). */
export interface MediaObject {
  link?: string;
  id?: string;
  caption?: string;
  filename?: string;
  voice?: boolean;
}

/** The upstream media object: `{ id | link, caption?, filename?, voice? }`. */
export type UpstreamMediaObject = { id?: string; link?: string; caption?: string; filename?: string; voice?: boolean };

export const captionable = (type: MediaType) => type === 'image' || type === 'video' || type === 'document';

/** Meta's voice-message flag, as the request gave it, on a file that goes out as audio. */
export const voiceFlag = (type: MediaType, media: MediaObject): { voice?: boolean } =>
  type === 'audio' && typeof media.voice === 'boolean' ? { voice: media.voice } : {};

/** The request's media object as the upstream takes it for `type` (what does not apply to the type dropped). */
export const upstreamObject = (type: MediaType, media: MediaObject): UpstreamMediaObject => {
  const out: UpstreamMediaObject = media.id !== undefined ? { id: media.id } : { link: media.link };
  if (media.caption !== undefined && captionable(type)) out.caption = media.caption;
  if (media.filename !== undefined && type === 'document') out.filename = media.filename;
  return { ...out, ...voiceFlag(type, media) };
};
