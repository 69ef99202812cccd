/** Request schemas of the media endpoints. */
import * as v from 'valibot';
import { MEDIA_TYPES } from './formats.ts';

const mediaType = v.picklist(MEDIA_TYPES, `must be one of: ${MEDIA_TYPES.join(', ')}`);

/** `POST /media/v1` multipart fields, as the multipart parser hands them over. */
export const uploadForm = v.looseObject({
  type: mediaType,
  file: v.looseObject(
    {
      content: v.instance(Buffer, 'must be a file'),
      filename: v.optional(v.string()),
      mimetype: v.optional(v.string()),
    },
    'is required: a file part named "file"',
  ),
}, 'is required (multipart fields: file and type)');

export const createUploadBody = v.object({
  type: mediaType,
  file_size: v.pipe(v.number('must be the file size in bytes'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1')),
  mime_type: v.optional(v.pipe(v.string(), v.maxLength(255), v.regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type'))),
  filename: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
});
