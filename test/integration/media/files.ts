/** Media files generated on the fly (no fixtures): sharp for images, ffmpeg's lavfi sources for audio and video. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import ffmpeg from '@ffmpeg-installer/ffmpeg';

const run = promisify(execFile);

/** A small, compressible test image. */
export const smallPng = () => sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 40, b: 90 } } }).png().toBuffer();
export const smallJpeg = () => sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
export const smallWebp = () => sharp({ create: { width: 64, height: 64, channels: 4, background: '#33aa55' } }).webp().toBuffer();

/**
 * A photo-like JPEG of roughly `targetBytes`: smooth gradients plus mild noise, so that quality 85
 * brings it well under 5 MB (like a phone photo saved at quality 100).
 */
export async function photoJpeg(width: number, height: number, noise = 12): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const n = (rnd() - 0.5) * noise;
      raw[i] = Math.max(0, Math.min(255, (x * 255) / width + n));
      raw[i + 1] = Math.max(0, Math.min(255, (y * 255) / height + n));
      raw[i + 2] = Math.max(0, Math.min(255, 128 + 100 * Math.sin((x + y) / 40) + n));
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 100, chromaSubsampling: '4:4:4' }).toBuffer();
}

/** Pure noise: no quality setting brings it under the limit (the "still too large" rows). */
export async function noiseJpeg(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
  const { randomFillSync } = await import('node:crypto');
  randomFillSync(raw);
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 100, chromaSubsampling: '4:4:4' }).toBuffer();
}

export async function noisePng(width: number, height: number): Promise<Buffer> {
  const { randomFillSync } = await import('node:crypto');
  const raw = randomFillSync(Buffer.alloc(width * height * 3));
  return sharp(raw, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
}

/** A lossless WebP of random pixels: about 3 bytes a pixel (500×500 is about 750 KB, over a sticker's 500 KB). */
export async function noiseWebp(width: number, height: number): Promise<Buffer> {
  const { randomFillSync } = await import('node:crypto');
  const raw = randomFillSync(Buffer.alloc(width * height * 3));
  return sharp(raw, { raw: { width, height, channels: 3 } }).webp({ lossless: true }).toBuffer();
}

/** Runs ffmpeg with lavfi inputs and returns the output file's bytes. */
export async function synth(args: string[], ext: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'media-test-'));
  const out = join(dir, `out.${ext}`);
  try {
    await run(ffmpeg.path, ['-hide_banner', '-loglevel', 'error', '-y', ...args, out], { maxBuffer: 1 << 20 });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const toneMp3 = (seconds = 1) => synth(['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-c:a', 'libmp3lame', '-b:a', '64k'], 'mp3');
export const toneOpus = (seconds = 1) => synth(['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-c:a', 'libopus'], 'ogg');
export const toneVorbis = (seconds = 1) => synth(['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-c:a', 'libvorbis'], 'ogg');
export const toneWav = (seconds = 1) => synth(['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-c:a', 'pcm_s16le'], 'wav');
/** Stereo noise at a high MP3 bitrate: `seconds` × 40 KB/s, so ~420 s makes a ~17 MB file. */
export const noisyMp3 = (seconds: number) =>
  synth(['-f', 'lavfi', '-i', `anoisesrc=duration=${seconds}:color=white:amplitude=0.3`, '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '320k'], 'mp3');
/** AAC in an MP4 container with the ordinary isom brand (no video track): how many recorders save audio. */
export const aacInMp4 = () => synth(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'aac', '-f', 'mp4'], 'mp4');
/** A legacy Office file's OLE2/CFB container: its header, then a directory entry naming its main stream (`WordDocument`...). */
export function legacyOfficeFile(stream: string): Buffer {
  const bytes = Buffer.alloc(1536);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(bytes);
  Buffer.from(`${stream}\0`, 'utf16le').copy(bytes, 1024);
  return bytes;
}
export const smallMp4 = () =>
  synth(['-f', 'lavfi', '-i', 'testsrc=duration=1:size=160x120:rate=10', '-c:v', 'libx264', '-pix_fmt', 'yuv420p'], 'mp4');

/** A minimal but well-formed PDF. */
export const tinyPdf = () =>
  Buffer.from(
    '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n' +
      '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 100 100]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
  );

/** A long MP3 made fast: one short CBR clip repeated frame-aligned (no ID3/Xing headers to confuse the length). */
export async function longMp3(minutes: number): Promise<Buffer> {
  const clip = await synth(['-f', 'lavfi', '-i', 'sine=frequency=330:duration=10', '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '64k', '-write_xing', '0', '-id3v2_version', '0'], 'mp3');
  return Buffer.concat(Array.from({ length: Math.ceil((minutes * 60) / 10) }, () => clip));
}

/** A high-bitrate stereo MP3 of about `mb` MB, built from a repeated 10 s clip. */
export async function bigMp3(mb: number): Promise<Buffer> {
  const clip = await synth(['-f', 'lavfi', '-i', 'anoisesrc=duration=10:amplitude=0.2', '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '320k', '-write_xing', '0', '-id3v2_version', '0'], 'mp3');
  return Buffer.concat(Array.from({ length: Math.ceil((mb * 1024 * 1024) / clip.length) }, () => clip));
}

/** Uncompressed 96 kHz stereo float WAV: about 0.73 MB per second, so 24 s is over 16 MB. */
export const bigWav = (seconds: number) =>
  synth(['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}:sample_rate=96000`, '-ac', '2', '-c:a', 'pcm_f32le'], 'wav');
