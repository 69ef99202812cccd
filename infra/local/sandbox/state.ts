/** What the sandbox remembers: accepted messages, uploaded media, inbound windows and injected faults. */
import { createHash, randomBytes } from 'node:crypto';

export interface SentMessage {
  wamid: string;
  phoneNumberId: string;
  to: string; // digits only
  payload: Record<string, any>;
  at: string;
}

export interface StoredMedia {
  id: string;
  phoneNumberId: string;
  bytes: Buffer;
  mimeType: string;
  sha256: string;
  filename?: string;
  uploadedAt: string;
}

/** A read receipt (and typing indicator) the sandbox accepted: `POST /messages` with `status: 'read'`. */
export interface ReadReceipt {
  phoneNumberId: string;
  messageId: string;
  typingIndicator?: Record<string, unknown>;
  at: string;
}

/** One Graph API call as the sandbox received it (the Authorization header shows which token a call carried). */
export interface GraphRequest {
  method: string;
  path: string;
  authorization: string | undefined;
}

export type FaultKind = 'error500' | 'throttle' | 'hang' | 'error';

export interface Fault {
  kind: FaultKind;
  remaining: number;
  /** Which Graph calls it applies to: 'messages', 'media', 'templates' or 'any'. */
  target: string;
  /** kind 'error': the Graph error to answer with (any code, e.g. 131051, 131053 or one the service does not know). */
  code?: number;
  status?: number;
  message?: string;
  /** Meta's `error_data.details` and `error_subcode` for it. */
  details?: string;
  subcode?: number;
}

export const digits = (s: unknown): string => String(s ?? '').replace(/\D/g, '');

export const newWamid = (): string => `wamid.${randomBytes(24).toString('base64url')}`;

export const newMediaId = (): string => {
  let id = '7';
  while (id.length < 16) id += Math.floor(Math.random() * 10);
  return id;
};

export class SandboxState {
  readonly sent: SentMessage[] = [];
  readonly media = new Map<string, StoredMedia>();
  readonly reads: ReadReceipt[] = [];
  /** Last inbound message per `${phoneNumberId}:${digits}` (epoch ms): the 24-hour window. */
  readonly lastInbound = new Map<string, number>();
  /** wamids of inbound messages (reaction targets) → their chat. */
  readonly inbound = new Map<string, { phoneNumberId: string; from: string }>();
  faults: Fault[] = [];
  /** A number whose business brought its own access token accepts only that token (as a WABA-scoped Meta token would). */
  readonly tokens = new Map<string, string>();
  readonly requests: GraphRequest[] = [];
  defaultPhoneNumberId: string | undefined;

  windowKey = (phoneNumberId: string, recipient: string) => `${phoneNumberId}:${digits(recipient)}`;

  /** A customer's message to a number: it opens their 24-hour window (from its time) and can be reacted to and read. */
  customerWrote(phoneNumberId: string, from: string, wamid: string, atMs: number): void {
    const key = this.windowKey(phoneNumberId, from);
    this.lastInbound.set(key, Math.max(this.lastInbound.get(key) ?? 0, atMs));
    this.inbound.set(wamid, { phoneNumberId, from: digits(from) });
  }

  windowOpen(phoneNumberId: string, recipient: string, now = Date.now()): boolean {
    const at = this.lastInbound.get(this.windowKey(phoneNumberId, recipient));
    return at !== undefined && now - at < 24 * 3600 * 1000;
  }

  addMedia(phoneNumberId: string, bytes: Buffer, mimeType: string, filename?: string): StoredMedia {
    const m: StoredMedia = {
      id: newMediaId(),
      phoneNumberId,
      bytes,
      mimeType,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      filename,
      uploadedAt: new Date().toISOString(),
    };
    this.media.set(m.id, m);
    return m;
  }

  /** Takes the next injected fault for a call to `target`, if any. */
  takeFault(target: string): Fault | undefined {
    const f = this.faults.find((x) => x.remaining > 0 && (x.target === 'any' || x.target === target));
    if (!f) return undefined;
    f.remaining--;
    this.faults = this.faults.filter((x) => x.remaining > 0);
    return f;
  }

  reset(): void {
    this.sent.length = 0;
    this.reads.length = 0;
    this.media.clear();
    this.lastInbound.clear();
    this.inbound.clear();
    this.faults = [];
    this.tokens.clear();
    this.requests.length = 0;
  }
}
