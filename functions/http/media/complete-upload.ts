/** POST /media/v1/uploads/{id}/complete: check the uploaded object and turn it into a media id. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { idParams } from '#shared/http/schemas.ts';
import { completeUpload } from '#shared/media/presigned-upload.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /media/v1/uploads/{id}/complete',
    summary: 'Complete a presigned media upload; answers the Uploaded media result (idempotent: concurrent completions answer the one media)',
    params: idParams,
    bodyKind: 'none',
    // An id that is not a UUID names no upload.
    invalid: idNotFound('Upload'),
    responses: {
      200: 'Uploaded media result { media_id, mime_type, file_size, type }',
      400: 'upload_incomplete, upload_expired, unsupported_media_type',
      404: 'not_found',
      409: 'upload_in_progress (another request has been completing it for 20 s: complete again for its media)',
      413: 'media_too_large',
    },
  },
  async ({ auth, params }) => ({ status: 200, body: await completeUpload(auth.businessId, params.id) }),
);
