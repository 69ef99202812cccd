/** Template header media: by url or media id, a media id in `url` normalised, foreign ids refused. */
import { startMediaHarness, type MediaHarness } from './harness.ts';
import { smallPng, tinyPdf } from './files.ts';

let harness: MediaHarness;
let resolveHeaderMedia: typeof import('#shared/media/header-media.ts').resolveHeaderMedia;
let tenant: { businessId: string; phoneNumberId: string };
let other: { businessId: string; phoneNumberId: string };
let mediaId: string;
let foreignId: string;

beforeAll(async () => {
  harness = await startMediaHarness();
  const api = await import('../../support/api.ts');
  ({ resolveHeaderMedia } = await import('#shared/media/header-media.ts'));
  const { uploadMedia } = await import('#shared/media/upload-service.ts');
  tenant = await api.newTenant();
  other = await api.newTenant();
  mediaId = (await uploadMedia(tenant.businessId, 'image', await smallPng(), 'h.png')).media_id;
  foreignId = (await uploadMedia(other.businessId, 'document', tinyPdf(), 'x.pdf')).media_id;
});

afterAll(async () => harness.stop());

describe('resolveHeaderMedia', () => {
  it('builds a header parameter from a url', async () => {
    const header = await resolveHeaderMedia(tenant.businessId, tenant.phoneNumberId, { type: 'image', url: 'https://cdn.example.com/promo.jpg' });
    expect(header).toEqual({ type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/promo.jpg' } }] });
  });

  it('uses a media id of the sending number, also when it was put in url', async () => {
    // Act
    const byId = await resolveHeaderMedia(tenant.businessId, tenant.phoneNumberId, { type: 'image', media_id: mediaId });
    const inUrl = await resolveHeaderMedia(tenant.businessId, tenant.phoneNumberId, { type: 'image', url: mediaId });
    // Assess
    expect(byId.parameters[0]).toEqual({ type: 'image', image: { id: mediaId } });
    expect(inUrl).toEqual(byId);
  });

  it('refuses a media id of another account with MEDIA_PERMISSION_DENIED and a hint', async () => {
    // Act
    // (each promise is awaited before the next starts: a rejection must never wait unobserved)
    const attempt = resolveHeaderMedia(tenant.businessId, tenant.phoneNumberId, { type: 'document', media_id: foreignId });
    // Assess
    await expect(attempt).rejects.toMatchObject({ status: 403, body: { code: 'MEDIA_PERMISSION_DENIED', hint: expect.any(String), message: expect.any(String) } });
    const unknown = resolveHeaderMedia(tenant.businessId, tenant.phoneNumberId, { type: 'image', url: '123456789012345' });
    await expect(unknown).rejects.toMatchObject({ body: { code: 'MEDIA_PERMISSION_DENIED' } });
  });

  it('refuses a header link to the metadata address', async () => {
    const attempt = resolveHeaderMedia(tenant.businessId, tenant.phoneNumberId, { type: 'image', url: 'http://169.254.169.254/x.jpg' });
    await expect(attempt).rejects.toMatchObject({ status: 400, body: { error: 'invalid_media_link' } });
  });
});
