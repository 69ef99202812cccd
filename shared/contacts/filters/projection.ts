/**
 * The compact, filter-ready projection of a contact. Every active contact item carries `spk`/`ssk`/`proj`
 * (index `shard`, which projects only `proj`); a soft-deleted contact carries none, so it is in no count.
 * Counting a segment reads the SHARD_COUNT shards in parallel and evaluates a compiled predicate on
 * `proj`, never reading whole contact items.
 *
 * `proj` is one string of fields separated by U+001F (trailing empty fields dropped):
 *   0 phone digits · 1 folded name · 2 folded email · 3 folded tags joined by U+001E · 4 funnel stage (packed UUID)
 *   5 origin · 6 created_at · 7 last_contact_at (epoch seconds, base 36) · 8 assigned agent (packed UUID)
 *   9 opted_out ('1' or empty) · 10 custom_fields as JSON (empty when none)
 * Folded = lower-cased, accents removed (normalize.ts), separators removed. UUIDs are packed to 22 base64url
 * characters. A delimited string instead of JSON saves the quotes and brackets on every contact read.
 */
import { keys } from '#shared/store/keys.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { digits, epochSeconds, fold, packUuid } from './normalize.ts';

const FS = '\u001f';
const TS = '\u001e';

/** Parallel read width of a full projection scan; fixed, because it is part of every stored key. */
export const SHARD_COUNT = 16;

/**
 * The decoded projection: what filters and search see of a contact. Decoding is one split; every other
 * field is read (and parsed) only when a predicate asks for it, because a count touches every contact.
 * `stage` and `agent` stay packed (packUuid); predicates compare packed ids.
 */
export class ProjectedContact {
  private readonly f: string[];
  private tagList?: string[];
  private customFields?: Record<string, string | number | boolean | null>;

  constructor(readonly id: string, proj: string) {
    this.f = proj.split(FS);
  }

  get phone(): string { return this.f[0] ?? ''; }
  get name(): string { return this.f[1] ?? ''; }
  get email(): string { return this.f[2] ?? ''; }
  get tags(): string[] { return (this.tagList ??= this.f[3] ? this.f[3].split(TS) : []); }
  /** Packed funnel stage id, or null. */
  get stage(): string | null { return this.f[4] || null; }
  get origin(): string { return this.f[5] ?? ''; }
  /** Epoch seconds. */
  get created(): number | null { return this.f[6] ? parseInt(this.f[6], 36) : null; }
  get lastContact(): number | null { return this.f[7] ? parseInt(this.f[7], 36) : null; }
  /** Packed assigned agent id, or null. */
  get agent(): string | null { return this.f[8] || null; }
  get optedOut(): boolean { return this.f[9] === '1'; }
  get custom(): Record<string, string | number | boolean | null> { return (this.customFields ??= this.f[10] ? JSON.parse(this.f[10]) : {}); }
}

/** FNV-1a: a stable, even spread of ids over the shards (ids need not be UUIDs). */
export const shardOf = (contactId: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < contactId.length; i++) {
    h ^= contactId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % SHARD_COUNT;
};

const clean = (x: string) => x.replace(/[\u001e\u001f]/g, ' ');
const date36 = (iso: string | null | undefined) => {
  const s = epochSeconds(iso);
  return s === null ? '' : s.toString(36);
};

export const encodeProjection = (contact: Contact): string => {
  const custom = contact.custom_fields && Object.keys(contact.custom_fields).length > 0 ? JSON.stringify(contact.custom_fields) : '';
  const row: string[] = [
    digits(contact.phone_number ?? ''),
    clean(fold(contact.name ?? '')),
    clean(fold(contact.email ?? '')),
    (contact.tags ?? []).map((t) => clean(fold(t))).join(TS),
    contact.funnel_stage_id ? packUuid(contact.funnel_stage_id) : '',
    clean(contact.origin ?? ''),
    date36(contact.created_at),
    date36(contact.last_contact_at),
    contact.assigned_agent_id ? packUuid(contact.assigned_agent_id) : '',
    contact.opted_out ? '1' : '',
    custom,
  ];
  while (row.length > 1 && row[row.length - 1] === '') row.pop();
  return row.join(FS);
};

/** The three attributes a contact write adds to an active contact item (omit them when soft-deleting). */
export function projectionAttributes(businessId: string, contact: Contact): { spk: string; ssk: string; proj: string } {
  return { ...keys.contactShard(businessId, shardOf(contact.id), contact.id, epochSeconds(contact.created_at)), proj: encodeProjection(contact) };
}

export const decodeProjection = (proj: string, id = ''): ProjectedContact => new ProjectedContact(id, proj);

/** The projection of a full contact, as the filters see it (used to evaluate one contact in memory). */
export const projectContact = (contact: Contact): ProjectedContact => decodeProjection(encodeProjection(contact), contact.id);
