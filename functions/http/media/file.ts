/**
 * GET /media/v1/files/{token}: a media file's download link (the `url` of the Cloud API's media object). Public, as
 * a pre-signed URL is: the token is one (shared/media/file-links.ts). Redirects to the file, with or without an
 * Authorization header on the request.
 */
import * as v from 'valibot';
import { publicEndpoint } from '#shared/http/public-endpoint.ts';
import { notFound } from '#shared/http/errors.ts';
import { fileTarget } from '#shared/media/file-links.ts';

export const { handler, spec } = publicEndpoint(
  {
    route: 'GET /media/v1/files/{token}',
    summary: 'Download a media file by the link its media object gave (302 to the file; the link expires in 5 minutes)',
    params: v.object({ token: v.pipe(v.string(), v.maxLength(4096)) }),
    responses: { 302: 'redirect to the file', 404: 'not_found (not a link this service gave)' },
  },
  async ({ params }) => {
    const target = await fileTarget(params.token);
    if (!target) throw notFound('No media file at this link');
    return { statusCode: 302, headers: { location: target, 'cache-control': 'no-store' }, body: '' };
  },
);
