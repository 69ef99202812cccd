/** POST /media/v1: upload a file (multipart `file` + `type`) and get a reusable media id. */
import { endpoint } from '#shared/http/endpoint.ts';
import { uploadForm } from '#shared/media/schemas.ts';
import { uploadMedia } from '#shared/media/upload-service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /media/v1',
    summary: 'Upload media (multipart/form-data, up to about 6 MB per request in AWS; use /media/v1/uploads for larger files)',
    bodyKind: 'multipart',
    body: uploadForm,
    responses: {
      200: 'Uploaded media result { media_id, mime_type, file_size, type }',
      400: 'validation_error (not multipart, missing file or type), unsupported_media_type (message lists the allowed MIME types), messaging_not_configured',
      413: 'media_too_large (message states the maximum for the type)',
      429: 'upstream_throttled: the upstream media store throttled the upload (retry_after, Retry-After)',
      502: 'upstream_unavailable: the upstream media store did not answer after retries (retry_after, Retry-After)',
    },
  },
  async ({ auth, body }) => ({
    status: 200,
    body: await uploadMedia(auth.businessId, body.type, body.file.content, body.file.filename),
  }),
);
