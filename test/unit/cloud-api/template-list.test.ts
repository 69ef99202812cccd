/** Graph's template list: filters, cursors both ways, fields and the total (shared/cloud-api/template-list.ts). */
import * as v from 'valibot';
import { selectTemplates, templateListQuery } from '#shared/cloud-api/template-list.ts';
import type { UpstreamTemplate } from '#shared/upstream/client.ts';

const t = (id: string, name: string, status: string, category: string, language: string, body: string): UpstreamTemplate =>
  ({ id, name, status, category, language, components: [{ type: 'BODY', text: body }] });
const templates = [
  t('1', 'hello_world', 'APPROVED', 'UTILITY', 'en_US', 'Hello World'),
  t('2', 'spring_sale', 'REJECTED', 'MARKETING', 'es_MX', 'Rebajas de primavera'),
  t('3', 'order_update', 'APPROVED', 'UTILITY', 'es_MX', 'Tu pedido {{1}} va en camino'),
  t('4', 'otp', 'PENDING', 'AUTHENTICATION', 'en_US', '{{1}} is your code'),
  t('5', 'order_update', 'APPROVED', 'UTILITY', 'en_US', 'Your order {{1}} is on its way'),
];
const select = (query: Record<string, string>) => selectTemplates(templates, v.parse(templateListQuery, query));
const ids = (r: { data: Record<string, unknown>[] }) => r.data.map((x) => x.id);

describe('the Cloud API template list', () => {
  it('filters by name, status, category, language and name_or_content, as Graph does', () => {
    expect(ids(select({ name: 'order_update' }))).toEqual(['3', '5']);
    expect(ids(select({ status: 'REJECTED' }))).toEqual(['2']);
    expect(ids(select({ status: 'approved,pending' }))).toEqual(['1', '3', '4', '5']);
    expect(ids(select({ category: 'UTILITY', language: 'es_MX' }))).toEqual(['3']);
    expect(ids(select({ name_or_content: 'pedido' }))).toEqual(['3']);
    expect(ids(select({ name_or_content: 'ORDER' }))).toEqual(['3', '5']);
  });

  it("takes part of a name, a content filter and lists of languages, as pywa sends them; answers every summary field pywa reads", () => {
    expect(ids(select({ name: 'order' }))).toEqual(['3', '5']);
    expect(ids(select({ content: 'camino' }))).toEqual(['3']);
    expect(ids(select({ language: 'en_US,es_MX' }))).toEqual(['1', '2', '3', '4', '5']);
    expect(ids(select({ language: 'es_MX' }))).toEqual(['2', '3']);
    expect(ids(select({ quality_score: 'RED' }))).toEqual([]);
    expect(select({ summary: 'total_count,message_template_count,message_template_limit,are_translations_complete', status: 'APPROVED' }).summary)
      .toEqual({ total_count: 3, message_template_count: 5, message_template_limit: 250, are_translations_complete: false });
  });

  it('pages by limit with after and before cursors, each page once, and counts every match in summary', () => {
    const first = select({ limit: '2', summary: 'total_count' });
    expect(ids(first)).toEqual(['1', '2']);
    expect(first.summary).toEqual({ total_count: 5 });
    const second = select({ limit: '2', after: first.paging.cursors.after! });
    expect(ids(second)).toEqual(['3', '4']);
    const third = select({ limit: '2', after: second.paging.cursors.after! });
    expect(ids(third)).toEqual(['5']);
    expect(ids(select({ limit: '2', after: third.paging.cursors.after! }))).toEqual([]);
    expect(ids(select({ limit: '2', before: third.paging.cursors.before! }))).toEqual(['3', '4']);
    expect(ids(select({}))).toEqual(['1', '2', '3', '4', '5']);
  });

  it('links the pages before and after with the request\'s own URL, its other parameters kept', () => {
    const url = (q: Record<string, string>) => `https://api.example/v23.0/w/message_templates?${new URLSearchParams(q)}`;
    const second = selectTemplates(templates, v.parse(templateListQuery, { limit: '2', status: 'APPROVED', after: select({ limit: '1', status: 'APPROVED' }).paging.cursors.after! }), url);
    expect(ids(second)).toEqual(['3', '5']);
    expect(second.paging).toEqual({ cursors: expect.any(Object), previous: expect.stringContaining('status=APPROVED&limit=2&before=') });
    const first = selectTemplates(templates, v.parse(templateListQuery, { limit: '1' }), url);
    expect(new URL((first.paging as { next: string }).next).searchParams.get('after')).toBe(first.paging.cursors.after);
  });

  it('answers only the fields asked for, with the id', () => {
    expect(select({ fields: 'name,status', limit: '1' }).data).toEqual([{ id: '1', name: 'hello_world', status: 'APPROVED' }]);
    // A field name is looked up among the template's own members only.
    expect(JSON.stringify(select({ fields: 'constructor,__proto__,toString', limit: '1' }).data)).toBe('[{"id":"1"}]');
  });

  it('refuses a cursor it did not make and a limit out of range', () => {
    expect(() => select({ after: 'bm9wZQ' })).toThrow(/cursor/);
    expect(() => v.parse(templateListQuery, { limit: '0' })).toThrow(/at least 1/);
    expect(() => v.parse(templateListQuery, { limit: 'ten' })).toThrow(/whole number/);
  });
});
