/** Graph API error bodies: `{ error: { message, type, code, error_data: { details }, fbtrace_id } }`. */
import { randomBytes } from 'node:crypto';

export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly details: string,
    readonly type = 'OAuthException',
    readonly subcode?: number,
  ) {
    super(message);
  }

  body() {
    return {
      error: {
        message: `(#${this.code}) ${this.message}`,
        type: this.type,
        code: this.code,
        ...(this.subcode !== undefined ? { error_subcode: this.subcode } : {}),
        error_data: { messaging_product: 'whatsapp', details: this.details },
        fbtrace_id: randomBytes(12).toString('base64url'),
      },
    };
  }
}

/** The sandbox's answers for the upstream codes of the contract (titles as the Cloud API words them). */
export const sandboxErrors = {
  windowClosed: () => new GraphError(400, 131047, 'Re-engagement message', 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.'),
  byRecipient: (code: number) => {
    switch (code) {
      case 130472: return new GraphError(400, 130472, "User's number is not a valid WhatsApp account", 'The recipient phone number is not registered on WhatsApp.');
      case 131026: return new GraphError(400, 131026, 'Message undeliverable', 'The recipient has blocked this business or cannot receive messages.');
      case 131042: return new GraphError(400, 131042, 'Business eligibility payment issue', 'There is no valid payment method for the WhatsApp Business Account.');
      default: return new GraphError(400, 131048, 'Spam rate limit hit', 'Message failed to send because there are restrictions on how many messages can be sent from this phone number.');
    }
  },
  templateNotFound: (name: string, language: string) =>
    new GraphError(404, 132000, 'Template name does not exist in the translation', `template name (${name}) does not exist in ${language}`),
  templateParams: (name: string, expected: number, got: number) =>
    new GraphError(400, 132000, 'Number of parameters does not match the expected number of params', `body: number of localizable_params (${got}) does not match the expected number of params (${expected}) for template ${name}`),
  mediaDownload: (link: string) => new GraphError(400, 131052, 'Media download error', `Failed to download the media from ${link}`),
  unsupportedMedia: (mime: string) => new GraphError(400, 131051, 'Unsupported message type', `Media type ${mime} is not supported`),
  fileTooLarge: (max: number) => new GraphError(400, 131053, 'Media upload error', `The file exceeds the maximum size of ${max} bytes for its type`),
  invalidParameter: (details: string) => new GraphError(400, 100, 'Invalid parameter', details),
  throttled: () => new GraphError(429, 130429, 'Rate limit hit', 'Cloud API message throughput has been reached.'),
  internal: () => new GraphError(500, 131000, 'Something went wrong', 'An unknown error occurred in the sandbox (injected fault).', 'OAuthException'),
  badToken: () => new GraphError(401, 190, 'Invalid OAuth access token - Cannot parse access token', 'Invalid OAuth access token'),
  unknownPath: (path: string) => new GraphError(400, 100, `Unsupported request - method type: ${path}`, 'Unknown path components', 'GraphMethodException'),
};
