/**
 * Media worker figures, each beside a baseline measured in the same run:
 * - image ladder: a 6-8 MB photo re-encoded at quality 85, 70 and 50 with sharp (decode once, encode
 *   three times) vs ImageMagick doing the same three encodings of the same file in one read (read, auto-orient,
 *   write at 85, 70 and 50). ImageMagick is the npm package `@imagemagick/magick-wasm` (ImageMagick 7 built to
 *   WebAssembly), so every machine that ran `npm ci` has the baseline and the verdict. Target: at least 3x faster.
 * - audio: a 20 MB MP3 (320 kbps stereo, ~8.7 min) to MP3 64 kbps mono vs the audio's own duration
 *   (real time). Target: at least 100x faster than real time.
 * - peak memory of the worker's processing on the largest inputs it accepts (a ~100 MB image download,
 *   a 100 MB audio download), measured in a fresh child process (Node's peak RSS plus ffmpeg's), vs the
 *   memory the media worker gets in CDK (shared/routes.ts `workers`).
 *
 * The child mode (MEDIA_BENCH_CHILD) is this same file run by node with tsx.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { measure, type BenchFigure, type BenchOptions } from './types.ts';

const run$ = promisify(execFile);
const MB = 1024 * 1024;

/** ImageMagick's own ladder: one read, then the three encodings, as `magick in -quality 85 -write a ... c` does. */
async function imageMagickLadder(): Promise<(photo: Uint8Array) => number[]> {
  const { initializeImageMagick, ImageMagick, MagickFormat } = await import('@imagemagick/magick-wasm');
  await initializeImageMagick(await readFile(createRequire(import.meta.url).resolve('@imagemagick/magick-wasm/magick.wasm')));
  return (photo) => {
    const sizes: number[] = [];
    ImageMagick.read(photo, (image) => {
      image.autoOrient();
      for (const quality of [85, 70, 50]) {
        image.quality = quality;
        image.write(MagickFormat.Jpeg, (data) => sizes.push(data.length));
      }
    });
    return sizes;
  };
}

export async function run({ quick }: BenchOptions): Promise<BenchFigure[]> {
  const { photoJpeg, noiseJpeg, synth } = await import('../integration/media/files.ts');
  const { compressImage } = await import('#shared/media/convert/image-ladder.ts');
  const { toMp3Mono64k, probeDurationSeconds, ffmpegPath, MP3_64K_MONO_ARGS } = await import('#shared/media/convert/ffmpeg.ts');
  const { workers } = await import('#shared/routes.ts');
  const dir = await mkdtemp(join(tmpdir(), 'media-bench-'));
  const figures: BenchFigure[] = [];
  try {
    // ---- image ladder vs ImageMagick ------------------------------------------------------------
    const photo = await photoJpeg(3200, 2400, 30);
    const n = quick ? 3 : 5;
    // limit 0: every step of the ladder runs, on both sides.
    const ours = await measure(() => compressImage(photo, 0), n);
    const ladder = await imageMagickLadder();
    // The baseline is several times slower than sharp: fewer runs and no warm-up keep the bench short.
    const theirs = await measure(async () => ladder(photo), quick ? 2 : 3, 0);
    figures.push({
      name: `media: image ladder 85/70/50, ${(photo.length / MB).toFixed(1)} MB photo`,
      value: ours.median, spread: ours.spread, unit: 'ms',
      baseline: theirs.median, baselineName: 'ImageMagick 7 (magick-wasm), same ladder',
      target: { maxRatio: 1 / 3 },
    });

    // ---- audio to MP3 64 kbps mono vs real time --------------------------------------------------
    const audioMb = quick ? 5 : 20;
    const clip = await synth(['-f', 'lavfi', '-i', 'sine=frequency=220:duration=10', '-f', 'lavfi', '-i', 'anoisesrc=duration=10:amplitude=0.05',
      '-filter_complex', 'amix=inputs=2', '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '320k', '-write_xing', '0', '-id3v2_version', '0'], 'mp3');
    const audio = Buffer.concat(Array.from({ length: Math.ceil((audioMb * MB) / clip.length) }, () => clip));
    const seconds = (await probeDurationSeconds(audio))!;
    const conv = await measure(() => toMp3Mono64k(audio), quick ? 2 : 3);
    // CPU time of the same ffmpeg command: what one dedicated vCPU (a Lambda) takes, whatever else this machine runs.
    const mp3Path = join(dir, 'in.mp3');
    await writeFile(mp3Path, audio);
    const cpu = await measureCpu(() => ffmpegCpuMs(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', mp3Path, ...MP3_64K_MONO_ARGS, join(dir, 'out.mp3')]), quick ? 2 : 3);
    figures.push({
      name: `media: ${(audio.length / MB).toFixed(0)} MB MP3 (${Math.round(seconds)} s) to MP3 64 kbps mono, CPU time`,
      value: cpu.median, spread: cpu.spread, unit: 'ms',
      baseline: seconds * 1000, baselineName: 'real time (audio duration)',
      target: { maxRatio: 1 / 100 },
      note: `${(seconds * 1000 / cpu.median).toFixed(0)}x faster than real time in CPU time; wall time here ${conv.median.toFixed(0)} ms ` +
        `(${(seconds * 1000 / conv.median).toFixed(0)}x real time, load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`,
    });

    // ---- peak memory on the largest inputs ------------------------------------------------------
    const memoryMb = workers.find((w) => w.queue === 'media')!.memoryMb!;
    const bigImage = await noiseJpeg(quick ? 4000 : 6000, quick ? 3000 : 6000); // ~100 MB at full size
    const imagePath = join(dir, 'big.jpg');
    await writeFile(imagePath, bigImage);
    const wavSeconds = quick ? 120 : Math.floor((100 * MB) / 176_400); // 100 MB of CD audio
    const bigAudio = await synth(['-f', 'lavfi', '-i', `sine=frequency=330:duration=${wavSeconds}`, '-ac', '2', '-ar', '44100', '-c:a', 'pcm_s16le'], 'wav');
    const audioPath = join(dir, 'big.wav');
    await writeFile(audioPath, bigAudio);
    for (const [kind, path, size] of [['image', imagePath, bigImage.length], ['audio', audioPath, bigAudio.length]] as const) {
      const peak = await childPeakMb(kind, path);
      figures.push({
        name: `media: worker peak memory, ${(size / MB).toFixed(0)} MB ${kind} input`,
        value: peak.totalMb, unit: 'MB',
        baseline: memoryMb, baselineName: 'media worker memory in CDK',
        target: { maxRatio: 1 },
        note: `node ${peak.nodeMb.toFixed(0)} MB + ffmpeg ${peak.ffmpegMb.toFixed(0)} MB of ${memoryMb} MB`,
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return figures;
}

/** User + system CPU time of one ffmpeg run, read from the shell's `times` for its finished child. */
async function ffmpegCpuMs(ffmpeg: string, args: string[]): Promise<number> {
  const { stdout } = await run$('sh', ['-c', '"$0" "$@" >/dev/null 2>&1; times', ffmpeg, ...args]);
  const children = stdout.trim().split('\n').pop()!;
  const toMs = (t: string) => {
    const m = /(\d+)m([\d.]+)s/.exec(t)!;
    return (Number(m[1]) * 60 + Number(m[2])) * 1000;
  };
  const [user, sys] = children.trim().split(/\s+/);
  return toMs(user!) + toMs(sys!);
}

async function measureCpu(fn: () => Promise<number>, n: number): Promise<{ median: number; spread: number }> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await fn());
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(n / 2)]!, spread: samples[n - 1]! - samples[0]! };
}

/** Runs the worker's processing of one input in a fresh process and reports its peak memory. */
async function childPeakMb(kind: 'image' | 'audio', inputPath: string): Promise<{ nodeMb: number; ffmpegMb: number; totalMb: number }> {
  const self = fileURLToPath(import.meta.url);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', self], {
      env: { ...process.env, MEDIA_BENCH_CHILD: kind, MEDIA_BENCH_INPUT: inputPath },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`memory child exited ${code}`))));
  });
  return JSON.parse(out.trim().split('\n').pop()!);
}

/** Child mode: what the media worker does with a downloaded file of this kind. */
async function childMain(kind: string, inputPath: string): Promise<void> {
  // ffmpeg runs as a child of this process: sample its high-water mark while it runs.
  let ffmpegKb = 0;
  const sampler = setInterval(async () => {
    for (const pid of await readdir('/proc').catch(() => [] as string[])) {
      if (!/^\d+$/.test(pid)) continue;
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      if (!new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status)) continue;
      const hwm = Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      ffmpegKb = Math.max(ffmpegKb, hwm);
    }
  }, 10);
  const bytes = await readFile(inputPath);
  if (kind === 'image') {
    const { compressImage } = await import('#shared/media/convert/image-ladder.ts');
    await compressImage(bytes, 0);
  } else {
    const { toMp3Mono64k, probeDurationSeconds } = await import('#shared/media/convert/ffmpeg.ts');
    await probeDurationSeconds(bytes);
    await toMp3Mono64k(bytes);
  }
  clearInterval(sampler);
  const nodeMb = process.resourceUsage().maxRSS / 1024;
  const ffmpegMb = ffmpegKb / 1024;
  process.stdout.write(`${JSON.stringify({ nodeMb, ffmpegMb, totalMb: nodeMb + ffmpegMb })}\n`);
}

if (process.env.MEDIA_BENCH_CHILD) {
  await childMain(process.env.MEDIA_BENCH_CHILD, process.env.MEDIA_BENCH_INPUT!);
  process.exit(0);
}
