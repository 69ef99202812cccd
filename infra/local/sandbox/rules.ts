/**
 * The sandbox's acceptance rules for `POST /{version}/{phone-number-id}/messages` (decisions.md "sandbox rules"):
 * recipient numbers that stand for upstream failures, the 24-hour window for free-form messages, known
 * templates and their placeholder counts, unreachable media links and media ids of another number.
 */
import { GraphError, sandboxErrors } from './errors.ts';
import { SANDBOX_TEMPLATES, placeholderCount } from './templates.ts';
import { digits, type SandboxState } from './state.ts';
import { isComponent } from '#shared/templates/component-kind.ts';

const TYPES = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'template', 'interactive', 'location', 'contacts', 'reaction'];
const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'];
const FAILING_SUFFIXES = [130472, 131026, 131042, 131048];

export function checkMessage(state: SandboxState, phoneNumberId: string, payload: Record<string, any>): GraphError | undefined {
  if (payload?.messaging_product !== 'whatsapp') return sandboxErrors.invalidParameter('messaging_product must be "whatsapp"');
  const to = digits(payload.to);
  if (to.length < 7) return sandboxErrors.invalidParameter('The parameter to is required and must be a phone number');
  const type = payload.type ?? 'text';
  if (!TYPES.includes(type)) return sandboxErrors.invalidParameter(`Unsupported message type ${type}`);
  if (!payload[type] || typeof payload[type] !== 'object') return sandboxErrors.invalidParameter(`The parameter ${type} is required`);

  const failing = FAILING_SUFFIXES.find((code) => to.endsWith(String(code)));
  if (failing) return sandboxErrors.byRecipient(failing);

  if (type === 'template') return checkTemplate(state, phoneNumberId, payload.template);
  if (!state.windowOpen(phoneNumberId, to)) return sandboxErrors.windowClosed();

  if (type === 'text' && (typeof payload.text.body !== 'string' || payload.text.body.length === 0)) {
    return sandboxErrors.invalidParameter('The parameter text.body is required');
  }
  if (MEDIA_TYPES.includes(type)) return checkMedia(state, phoneNumberId, payload[type]);
  return undefined;
}

function checkMedia(state: SandboxState, phoneNumberId: string, media: Record<string, any>): GraphError | undefined {
  if (typeof media.link === 'string') {
    return media.link.includes('sandbox-unreachable') ? sandboxErrors.mediaDownload(media.link) : undefined;
  }
  if (typeof media.id === 'string') {
    const stored = state.media.get(media.id);
    if (!stored || stored.phoneNumberId !== phoneNumberId) {
      return sandboxErrors.invalidParameter(`Media id ${media.id} does not exist or does not belong to phone number ${phoneNumberId}`);
    }
    return undefined;
  }
  return sandboxErrors.invalidParameter('A media object needs a link or an id');
}

function checkTemplate(state: SandboxState, phoneNumberId: string, template: Record<string, any>): GraphError | undefined {
  const name = String(template?.name ?? '');
  const language = String(typeof template?.language === 'string' ? template.language : template?.language?.code ?? '');
  const known = SANDBOX_TEMPLATES.find((t) => t.name === name && t.language === language);
  if (!known) return sandboxErrors.templateNotFound(name, language);
  const components: Record<string, any>[] = Array.isArray(template.components) ? template.components : [];

  const body = known.components.find((c) => c.type === 'BODY');
  const expected = placeholderCount(body?.text);
  const got = components.filter((c) => isComponent(c, 'body')).reduce((n, c) => n + (Array.isArray(c.parameters) ? c.parameters.length : 0), 0);
  if (expected !== got) return sandboxErrors.templateParams(name, expected, got);

  const header = known.components.find((c) => c.type === 'HEADER' && c.format !== 'TEXT');
  if (header) {
    const format = String(header.format).toLowerCase();
    const param = components.find((c) => isComponent(c, 'header'))?.parameters?.[0];
    if (!param || param.type !== format || !param[format]) {
      return sandboxErrors.invalidParameter(`Template ${name} needs a ${format} header parameter`);
    }
    const media = param[format];
    if (typeof media.link === 'string' && media.link.includes('sandbox-unreachable')) return sandboxErrors.mediaDownload(media.link);
    if (typeof media.id === 'string' && state.media.get(media.id)?.phoneNumberId !== phoneNumberId) {
      return sandboxErrors.invalidParameter(`Media id ${media.id} does not exist or does not belong to phone number ${phoneNumberId}`);
    }
  }
  return undefined;
}

/**
 * A read receipt, with or without the typing indicator (`{ messaging_product, status: 'read', message_id,
 * typing_indicator?: { type: 'text' } }`): the message must be a customer's message to this number.
 */
export function checkReadReceipt(state: SandboxState, phoneNumberId: string, payload: Record<string, any>): GraphError | undefined {
  if (payload.messaging_product !== 'whatsapp') return sandboxErrors.invalidParameter('messaging_product must be "whatsapp"');
  const inbound = typeof payload.message_id === 'string' ? state.inbound.get(payload.message_id) : undefined;
  if (!inbound || inbound.phoneNumberId !== phoneNumberId) return sandboxErrors.invalidParameter(`message_id ${payload.message_id} is not a message received by phone number ${phoneNumberId}`);
  const typing = payload.typing_indicator;
  if (typing !== undefined && (typeof typing !== 'object' || typing === null || typing.type !== 'text')) return sandboxErrors.invalidParameter('typing_indicator.type must be "text"');
  return undefined;
}

/** The number of the chat an accepted message went to (digits). */
export const recipientOf = (payload: Record<string, any>) => digits(payload.to);
