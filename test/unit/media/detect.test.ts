import { detectMime } from '#shared/media/detect.ts';
import { legacyOfficeFile } from '../../integration/media/files.ts';
import { mediaTooLarge } from '#shared/media/errors.ts';
import { LIMITS_AS_STRINGS, MEDIA_RULES } from '#shared/media/formats.ts';

describe('detectMime', () => {
  it('recognises plain UTF-8 text, which has no magic number', async () => {
    expect(await detectMime(Buffer.from('Hola, ¿qué tal?\nSegunda línea\n'))).toEqual({ mime: 'text/plain' });
  });

  it('recognises text in a single-byte character set (a CSV exported from Windows) and UTF-16 after its byte-order mark', async () => {
    expect(await detectMime(Buffer.from('Nombre;Ciudad\r\nPeña;León\r\n', 'latin1'))).toEqual({ mime: 'text/plain' });
    // Russian in Windows-1251: no ASCII letters, but words and lines.
    const cyrillic = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x20, 0xec, 0xe8, 0xf0, 0x0d, 0x0a, 0xc4, 0xee, 0xe1, 0xf0, 0xee, 0xe5, 0x20, 0xf3, 0xf2, 0xf0, 0xee]);
    expect(await detectMime(cyrillic)).toEqual({ mime: 'text/plain' });
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Hello world ✓\r\n', 'utf16le')]);
    expect(await detectMime(utf16le)).toEqual({ mime: 'text/plain' });
    const utf16be = Buffer.from(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('Hello world\n', 'utf16le').swap16()]));
    expect(await detectMime(utf16be)).toEqual({ mime: 'text/plain' });
    // Longer than the sample, with a surrogate pair cut at its end: still text.
    const long = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a'.repeat(32 * 1024 - 2) + '😀'.repeat(100), 'utf16le')]);
    expect(await detectMime(long)).toEqual({ mime: 'text/plain' });
  });

  it('reads an MPEG frame that starts like a byte-order mark as audio when no text follows', async () => {
    const frame = Buffer.concat([Buffer.from([0xff, 0xfe, 0x90, 0x00]), Buffer.alloc(400, 0x00)]);
    expect(await detectMime(frame)).not.toEqual({ mime: 'text/plain' });
  });

  it('takes text in a character set that writes no spaces (Shift-JIS Japanese) for text', async () => {
    // 日本語のテキスト (Japanese text) in Shift-JIS, without a space or a line break.
    const shiftJis = Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x65, 0x83, 0x4c, 0x83, 0x58, 0x83, 0x67]);
    expect(await detectMime(shiftJis)).toEqual({ mime: 'text/plain' });
  });

  it('does not take binary noise for text', async () => {
    expect(await detectMime(Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x10]))).toBeUndefined();
  });

  it('tells legacy Office files apart by the given name (they share the OLE2 container)', async () => {
    // Prepare: the OLE2/CFB signature followed by padding.
    const cfb = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(4096)]);
    // Act / Assess
    expect((await detectMime(cfb, 'report.doc'))?.mime).toBe('application/msword');
    expect((await detectMime(cfb, 'sheet.XLS'))?.mime).toBe('application/vnd.ms-excel');
    expect((await detectMime(cfb, 'slides.ppt'))?.mime).toBe('application/vnd.ms-powerpoint');
    expect((await detectMime(cfb, 'thing.bin'))?.mime).toBe('application/x-cfb');
  });

  it("tells legacy Office files apart by their main stream's name first, whatever they are called", async () => {
    expect((await detectMime(legacyOfficeFile('WordDocument'), 'report'))?.mime).toBe('application/msword');
    expect((await detectMime(legacyOfficeFile('Book'), 'sheet.doc'))?.mime).toBe('application/vnd.ms-excel');
    expect((await detectMime(legacyOfficeFile('PowerPoint Document')))?.mime).toBe('application/vnd.ms-powerpoint');
    // A longer name that merely begins like one is not that stream.
    expect((await detectMime(legacyOfficeFile('Bookmarks'), 'x'))?.mime).toBe('application/x-cfb');
  });
});

describe('media_too_large', () => {
  it('carries message, suggestion and the four limits as strings', () => {
    // Act
    const err = mediaTooLarge('video', 17 * 1024 * 1024);
    // Assess
    expect(err.status).toBe(413);
    expect(err.body).toEqual({
      error: 'media_too_large',
      message: expect.stringContaining('16 MB'),
      suggestion: expect.stringContaining('autoConvert'),
      limits: { image: '5 MB', video: '16 MB', audio: '16 MB', document: '100 MB' },
    });
    expect(Object.values(LIMITS_AS_STRINGS).every((s) => typeof s === 'string')).toBe(true);
  });

  it('matches the contract table', () => {
    expect(MEDIA_RULES.image.maxBytes).toBe(5 * 1024 * 1024);
    expect(MEDIA_RULES.video.maxBytes).toBe(16 * 1024 * 1024);
    expect(MEDIA_RULES.audio.maxBytes).toBe(16 * 1024 * 1024);
    expect(MEDIA_RULES.document.maxBytes).toBe(100 * 1024 * 1024);
    expect(MEDIA_RULES.sticker.maxBytes).toBe(500 * 1024);
  });
});
