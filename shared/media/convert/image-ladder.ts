/**
 * The contract's image ladder: re-encode at quality 85, then 70, then 50, and stop at the first result
 * under the limit. The image is decoded once (sharp/libvips) and only re-encoded per step; EXIF
 * orientation is applied and transparency flattened on white, because the result is a JPEG.
 *
 * Speed: Huffman-table optimisation is off (it is a second pass for a few percent of size; an
 * unoptimised encoding that fits means an optimised one would too), and when 85 does not fit, 70 and
 * 50 are encoded concurrently (libvips spreads them over the cores there are).
 */
import { availableParallelism } from 'node:os';
import sharp from 'sharp';

// sharp defaults libvips to one thread on glibc without jemalloc (fragmentation in long-lived servers);
// the media worker is a short-lived Lambda that should use every vCPU it is given.
sharp.concurrency(availableParallelism());

export const IMAGE_LADDER = [85, 70, 50] as const;

export interface LadderResult {
  /** The smallest encoding tried; `fits` says whether it is under the limit. */
  bytes: Buffer;
  mimeType: 'image/jpeg';
  quality: number;
  fits: boolean;
  /** Qualities tried, in order. */
  tried: number[];
}

/** The bytes are not an image libvips can decode (corrupt, truncated, or over the pixel bound): nothing to compress. */
export class UndecodableImageError extends Error {
  override name = 'UndecodableImageError';
}

/** 100 megapixels: far beyond any camera photo, and it bounds the decoded raster to ~300 MB in the worker. */
const MAX_PIXELS = 100_000_000;

export async function compressImage(input: Uint8Array, limitBytes: number): Promise<LadderResult> {
  const decoded = await decode(input).catch((err: Error) => {
    throw new UndecodableImageError(err.message);
  });
  const { data, info } = decoded;
  const raw = { width: info.width, height: info.height, channels: info.channels };
  const encode = (quality: number) => sharp(data, { raw }).jpeg({ quality, optimiseCoding: false }).toBuffer();

  const [first, ...rest] = IMAGE_LADDER;
  const top = await encode(first);
  if (top.length <= limitBytes) return { bytes: top, mimeType: 'image/jpeg', quality: first, fits: true, tried: [first] };
  const lower = await Promise.all(rest.map(encode));
  const tried = [...IMAGE_LADDER];
  const fitting = lower.findIndex((b) => b.length <= limitBytes);
  if (fitting >= 0) return { bytes: lower[fitting]!, mimeType: 'image/jpeg', quality: rest[fitting]!, fits: true, tried };
  return { bytes: lower[lower.length - 1]!, mimeType: 'image/jpeg', quality: rest[rest.length - 1]!, fits: false, tried };
}

/** The image as sRGB pixels, upright, transparency on white. */
async function decode(input: Uint8Array) {
  const source = sharp(input, { failOn: 'error', limitInputPixels: MAX_PIXELS });
  const meta = await source.metadata();
  let pipeline = source.rotate();
  if (meta.hasAlpha) pipeline = pipeline.flatten({ background: '#ffffff' });
  return pipeline.toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
}
