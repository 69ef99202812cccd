/** POST /media/v1/uploads: a presigned S3 upload for files too large for a request body (up to the type's maximum). */
import { endpoint } from '#shared/http/endpoint.ts';
import { createUploadBody } from '#shared/media/schemas.ts';
import { createUpload } from '#shared/media/presigned-upload.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /media/v1/uploads',
    summary: 'Start a large media upload: PUT the file to upload_url with the given headers, then complete it',
    body: createUploadBody,
    responses: {
      201: '{ upload_id, upload_url, method, headers, expires_at, max_bytes, complete_url }',
      400: 'validation_error, messaging_not_configured',
      413: 'media_too_large: file_size over the maximum for the type',
    },
  },
  async ({ auth, body }) => ({ status: 201, body: await createUpload(auth.businessId, body) }),
);
