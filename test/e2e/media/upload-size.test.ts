/**
 * The local stack lets a multipart upload over Lambda's 6 MB payload reach the handler, so that the answer is
 * the contract's per-type check ("file too large (message states the maximum for the type)").
 */
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { startTestStack, type LocalStack } from '../../support/stack.ts';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ demo: true });
}, 60_000);
afterAll(() => stack?.stop());

it('answers an image over 6 MB with 413 media_too_large stating the 5 MB maximum', async () => {
  // Prepare: random pixels do not compress, so this PNG is about 6.8 MB.
  const png = await sharp(randomBytes(1500 * 1500 * 3), { raw: { width: 1500, height: 1500, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
  expect(png.length).toBeGreaterThan(6 * 1024 * 1024);
  const form = new FormData();
  form.append('type', 'image');
  form.append('file', new Blob([png], { type: 'image/png' }), 'big.png');

  // Act
  const res = await fetch(`${stack.url}/media/v1`, { method: 'POST', headers: { authorization: `Bearer ${stack.demo!.apiKey}` }, body: form });

  // Assess
  expect(res.status).toBe(413);
  const body = (await res.json()) as any;
  expect(body.error).toBe('media_too_large');
  expect(body.message).toMatch(/5 ?MB/i);
}, 60_000);
