/**
 * Audio conversions with ffmpeg (the static build of @ffmpeg-installer, or FFMPEG_PATH where the Lambda
 * bundle puts it). Files go through /tmp rather than pipes because MP4/M4A inputs need a seekable input.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';

export const ffmpegPath = (): string => process.env.FFMPEG_PATH || ffmpegInstaller.path;

export class ConversionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConversionError';
  }
}

/** Runs ffmpeg on `input` with `outputArgs`, returns the output bytes. */
export async function transcode(input: Uint8Array, outputArgs: string[], outputExt: string, timeoutMs = 90_000): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'media-'));
  const inPath = join(dir, 'in');
  const outPath = join(dir, `out.${outputExt}`);
  try {
    await writeFile(inPath, input);
    await new Promise<void>((resolve, reject) => {
      const child = spawn(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', inPath, ...outputArgs, outPath], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new ConversionError(signal ? `ffmpeg was stopped (${signal})` : `ffmpeg could not convert the file: ${stderr.trim() || `exit ${code}`}`));
      });
    });
    return await readFile(outPath);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The contract's audio compression: MP3, 64 kbps, mono. At 64 kbps LAME low-passes around 11 kHz anyway,
 * so resampling to 22.05 kHz loses nothing audible and halves the encoder's work; compression level 7
 * (LAME -q 7) is its fast psychoacoustic mode.
 */
export const MP3_64K_MONO_ARGS = ['-vn', '-map_metadata', '-1', '-ac', '1', '-ar', '22050', '-c:a', 'libmp3lame', '-b:a', '64k', '-compression_level', '7'];
export const toMp3Mono64k = (input: Uint8Array) => transcode(input, MP3_64K_MONO_ARGS, 'mp3');

/** OGG/Opus, the format the upstream shows as a voice note (mono, speech-tuned). */
export const toVoiceNote = (input: Uint8Array) =>
  transcode(input, ['-vn', '-map_metadata', '-1', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-application', 'voip'], 'ogg');

/**
 * Duration of an audio/video file in seconds, from ffmpeg's reading of the container (no decoding);
 * undefined when ffmpeg cannot tell.
 */
export async function probeDurationSeconds(input: Uint8Array): Promise<number | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'media-'));
  const inPath = join(dir, 'in');
  try {
    await writeFile(inPath, input);
    const stderr = await new Promise<string>((resolve) => {
      // Without an output ffmpeg prints the input's description and exits non-zero: that is all we need.
      const child = spawn(ffmpegPath(), ['-hide_banner', '-nostdin', '-i', inPath], { stdio: ['ignore', 'ignore', 'pipe'] });
      let text = '';
      child.stderr.on('data', (d) => (text += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('close', () => {
        clearTimeout(timer);
        resolve(text);
      });
      child.on('error', () => resolve(''));
    });
    const m = /Duration:\s*(\d+):(\d+):(\d+(?:\.\d+)?)/.exec(stderr);
    return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bytes of an MP3 at 64 kbps for `seconds` of audio (plus a little framing overhead). */
export const mp3SizeAt64k = (seconds: number) => Math.ceil(seconds * 8000 * 1.01);
