/** The `{id}` of the conversation AI routes: anything that is not a UUID names no conversation (404). */
import { idParams } from '#shared/http/schemas.ts';

export const conversationParams = idParams;


