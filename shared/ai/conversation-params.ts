/** The `{id}` of the conversation AI routes: anything that is not a UUID names no conversation (404). */
import { idParams } from '#shared/http/schemas.ts';
import { notFound, validationError, type FieldErrors } from '#shared/http/errors.ts';
import { summarize } from '#shared/http/validation.ts';

export const conversationParams = idParams;

export const notFoundForBadId = (details: FieldErrors, where: 'body' | 'query' | 'params') =>
  where === 'params' ? notFound('Conversation not found') : validationError(details, summarize(details));
