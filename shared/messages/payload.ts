/**
 * A validated send request → the Cloud API message payload, and the `content` kept on the message record.
 * Service-only fields (content, ai, autoConvert, templateName, header_media...) never reach the upstream.
 */
import type { SendRequest, MessageType } from './schemas.ts';
import { withSentNulls } from './sent-nulls.ts';
import type { TemplateObject } from '#shared/templates/prepare.ts';
import { upstreamObject } from '#shared/media/upstream-object.ts';

export interface UpstreamPayload extends Record<string, unknown> {
  messaging_product: 'whatsapp';
  recipient_type: 'individual';
  to: string;
  type: MessageType;
}


export function buildPayload(req: SendRequest, extras: { template?: TemplateObject; reactionWamid?: string; contextWamid?: string } = {}): UpstreamPayload {
  const payload: UpstreamPayload = { messaging_product: 'whatsapp', recipient_type: 'individual', to: req.to, type: req.type };
  switch (req.type) {
    case 'text':
      payload.text = req.text
        ? { body: req.text.body, ...(req.text.preview_url !== undefined ? { preview_url: req.text.preview_url } : {}) }
        : { body: req.content };
      break;
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker':
      payload[req.type] = upstreamObject(req.type, req[req.type]);
      break;
    case 'template':
      payload.template = extras.template;
      break;
    case 'reaction':
      payload.reaction = { message_id: extras.reactionWamid ?? req.reaction.message_id, emoji: req.reaction.emoji };
      break;
    default:
      payload[req.type] = req[req.type];
  }
  if (req.context?.message_id) payload.context = { message_id: extras.contextWamid ?? req.context.message_id };
  if (req.biz_opaque_callback_data) payload.biz_opaque_callback_data = req.biz_opaque_callback_data;
  if (req.recipient_identity_key_hash !== undefined) payload.recipient_identity_key_hash = req.recipient_identity_key_hash;
  return withSentNulls(req, payload);
}

/** What the message record keeps as its content: the type object as sent. */
export const contentOf = (payload: UpstreamPayload): unknown => payload[payload.type];
