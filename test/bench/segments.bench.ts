/**
 * Segments: how fast a dynamic segment is counted from the sharded contact projection.
 *
 * - dynamic count time vs just reading the projection (every shard, same parallelism, no decoding or
 *   evaluation) at 10k and (non-quick) 100k contacts in DynamoDB Local. Target ≤ 1.2x: evaluation is nearly free.
 * - bytes read per contact (the `ssk` and `proj` attributes a count reads) vs the full contact item, both by
 *   DynamoDB's item-size rules. Target ≤ 25%.
 * - absolute count times and their growth from 10k to 100k (in the notes).
 *
 * Contacts are written straight into the table (BatchWrite) in the shape the contacts area writes, with a
 * realistic mix: most have a name and email, some a stage, an agent, custom fields and a last contact.
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import type { BenchFigure, BenchOptions } from './types.ts';
import { seededRandom } from './seeded-random.ts';
import { measure } from './types.ts';

const FIRST = ['María', 'José', 'Ana', 'Luis', 'Sofía', 'Carlos', 'Lucía', 'Miguel', 'Valeria', 'Jorge'];
const LAST = ['García', 'Hernández', 'López', 'Martínez', 'González', 'Pérez', 'Rodríguez', 'Sánchez'];
const TAGS = ['vip', 'newsletter', 'lead', 'cliente', 'mayoreo', 'promo-2026', 'soporte'];
const CITIES = ['Guadalajara', 'CDMX', 'Monterrey', 'Puebla', 'Querétaro'];
const ORIGINS = ['api', 'inbound', 'bulk', 'import'];

/** DynamoDB's item-size rules: attribute name bytes + value bytes (numbers ~ digits/2 + 1; lists/maps 3 + 1 per element). */
export function attributeSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(Math.abs(value)).replace('.', '').length / 2) + 1;
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + attributeSize(v), 0);
  return 3 + Object.entries(value as object).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k) + attributeSize(v), 0);
}
export const itemSize = (item: Record<string, unknown>) => Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k) + attributeSize(v), 0);

export async function run({ quick }: BenchOptions): Promise<BenchFigure[]> {
  const { batchWriteAll } = await import('#shared/store/batch.ts');
  const { keys } = await import('#shared/store/keys.ts');
  const { projectionAttributes, SHARD_COUNT } = await import('#shared/contacts/filters/projection.ts');
  const { readShard } = await import('#shared/contacts/filters/scan.ts');
  const { countSegment } = await import('#shared/segments/count.ts');
  const { createBusiness } = await import('#shared/business/repository.ts');
  type Contact = import('#shared/contacts/model.ts').Contact;

  const business = await createBusiness('Segments bench');
  const bid = business.businessId;
  const stages = Array.from({ length: 6 }, () => randomUUID());
  const agents = Array.from({ length: 8 }, () => randomUUID());
  const random = seededRandom(42);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  const iso = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString();

  const makeContact = (i: number): Contact => {
    const first = pick(FIRST);
    const last = pick(LAST);
    const created = iso(random() * 365);
    return {
      id: randomUUID(),
      phone_number: `+521${String(5500000000 + i).padStart(10, '0')}`,
      name: random() < 0.9 ? `${first} ${last}` : null,
      email: random() < 0.6 ? `${first}.${last}${i}@example.com`.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase() : null,
      tags: TAGS.filter(() => random() < 0.2),
      custom_fields: random() < 0.5 ? { city: pick(CITIES), ...(random() < 0.5 ? { plan: pick(['basic', 'premium']) } : {}) } : {},
      assigned_agent_id: random() < 0.3 ? pick(agents) : null,
      funnel_stage_id: random() < 0.5 ? pick(stages) : null,
      origin: pick(ORIGINS),
      opted_out: random() < 0.05,
      created_at: created,
      updated_at: created,
      last_contact_at: random() < 0.7 ? iso(random() * 90) : null,
      deleted_at: null,
    };
  };
  const itemOf = (c: Contact) => ({ ...keys.contact(bid, c.id), type: 'contact', businessId: bid, version: 1, ...c, ...projectionAttributes(bid, c) });

  let seeded = 0;
  const fullSizes: number[] = [];
  const readSizes: number[] = [];
  const indexSizes: number[] = [];
  const seedTo = async (n: number) => {
    const limit = pLimit(16);
    const jobs: Promise<void>[] = [];
    for (let start = seeded; start < n; start += 25) {
      const items = Array.from({ length: Math.min(25, n - start) }, (_, k) => itemOf(makeContact(start + k)));
      for (const item of items) {
        fullSizes.push(itemSize(item));
        readSizes.push(itemSize({ ssk: item.ssk, proj: item.proj }));
        indexSizes.push(itemSize({ pk: item.pk, sk: item.sk, spk: item.spk, ssk: item.ssk, proj: item.proj }));
      }
      jobs.push(limit(async () => {
        await batchWriteAll(items.map((Item) => ({ PutRequest: { Item } })));
      }));
    }
    await Promise.all(jobs);
    seeded = n;
  };

  // A typical dynamic segment: tags, a stage and recent activity.
  const now = new Date().toISOString();
  const segment = {
    id: randomUUID(), name: 'bench', description: null, color: null, segmentType: 'dynamic' as const,
    rules: { version: 3, filters: { tags: { any: ['vip', 'lead'] }, funnel_stage_id: stages.slice(0, 3), last_contact_at: { within_days: 60 } } },
    rulesFormat: 'filters' as const, contactCount: 0, countedAt: null, counterKey: null, createdAt: now, updatedAt: now,
  };
  const readOnly = () => Promise.all(Array.from({ length: SHARD_COUNT }, (_, s) => readShard(bid, s, () => undefined)));
  const count = () => countSegment(bid, segment).then((o) => { if (o.stale) throw new Error('count went stale'); return o.count; });

  const figures: BenchFigure[] = [];
  const sizes = quick ? [10_000] : [10_000, 100_000];
  const medians: Record<number, number> = {};
  for (const n of sizes) {
    await seedTo(n);
    const runs = n >= 100_000 ? 3 : quick ? 5 : 7;
    // Interleaved, alternating which goes first, so that any drift of the machine hits both the same way.
    const base: number[] = [];
    const dyn: number[] = [];
    await readOnly();
    await count();
    let matched = 0;
    const timeBase = async () => { base.push((await measure(readOnly, 1, 0)).median); };
    const timeCount = async () => { dyn.push((await measure(async () => { matched = await count(); }, 1, 0)).median); };
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) { await timeBase(); await timeCount(); } else { await timeCount(); await timeBase(); }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
    medians[n] = med(dyn);
    figures.push({
      name: `segments: dynamic count, ${n / 1000}k contacts`,
      value: med(dyn),
      spread: spread(dyn),
      unit: 'ms',
      baseline: med(base),
      baselineName: `read the projection only, ${SHARD_COUNT} shards in parallel`,
      target: { maxRatio: 1.2 },
      note: `${matched} of ${n} contacts match; ${(n / (med(dyn) / 1000)).toFixed(0)} contacts/s`,
    });
  }
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  figures.push({
    name: 'segments: bytes read per contact by a count',
    value: avg(readSizes),
    unit: 'bytes',
    baseline: avg(fullSizes),
    baselineName: 'full contact item',
    target: { maxRatio: 0.25 },
    note: `index entry incl. the table keys DynamoDB always projects (pk, sk, spk): ${avg(indexSizes).toFixed(0)} bytes (${((avg(indexSizes) / avg(fullSizes)) * 100).toFixed(0)}% of the item)`,
  });
  if (medians[100_000] !== undefined) {
    figures.push({
      name: 'segments: count time growth 10k → 100k',
      value: medians[100_000] / medians[10_000],
      unit: 'x',
      note: `absolute: ${medians[10_000].toFixed(0)} ms at 10k, ${medians[100_000].toFixed(0)} ms at 100k (10x the contacts); linear in contacts, read in ${SHARD_COUNT} parallel shards`,
    });
  }
  return figures;
}
