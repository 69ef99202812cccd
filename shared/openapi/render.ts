/** Server-side HTML rendering of the OpenAPI document for GET /docs. */
const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const schemaBlock = (schema: unknown) => `<pre class="schema">${esc(JSON.stringify(schema, null, 2))}</pre>`;

export function renderDocs(doc: any): string {
  const groups = new Map<string, string[]>();
  for (const [path, ops] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const tag = op.tags?.[0] ?? 'other';
      const params = (op.parameters ?? []).map((p: any) => `<li><code>${esc(p.name)}</code> <em>${esc(p.in)}</em>${p.required ? ' (required)' : ''}</li>`).join('');
      const body = op.requestBody ? Object.entries<any>(op.requestBody.content).map(([type, c]) => `<h4>Body (${esc(type)})</h4>${schemaBlock(c.schema)}`).join('') : '';
      const responses = Object.entries<any>(op.responses ?? {}).map(([code, r]) => `<li><code>${esc(code)}</code> ${esc(r.description)}</li>`).join('');
      const html = `<section class="op" id="${esc(op.operationId)}">
  <h3><span class="method ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
  <p>${esc(op.summary)}${op['x-required-scope'] ? ` — scope <code>${esc(op['x-required-scope'])}</code>` : ' — no API key'}</p>
  ${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ''}${body}
  <h4>Responses</h4><ul>${responses}</ul>
</section>`;
      (groups.get(tag) ?? groups.set(tag, []).get(tag)!).push(html);
    }
  }
  const nav = [...groups.keys()].map((g) => `<li><a href="#tag-${esc(g)}">${esc(g)}</a></li>`).join('');
  const sections = [...groups.entries()].map(([g, ops]) => `<h2 id="tag-${esc(g)}">${esc(g)}</h2>${ops.join('\n')}`).join('\n');
  const events = Object.keys(doc.webhooks ?? {}).map((e) => `<li><code>${esc(e)}</code></li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info?.title)}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#1f2937}
nav{width:220px;padding:1rem;background:#f3f4f6;position:sticky;top:0;height:100vh;overflow:auto}
main{flex:1;padding:1rem 2rem;max-width:960px}
.op{border:1px solid #e5e7eb;border-radius:8px;padding:.5rem 1rem;margin:1rem 0}
.method{font-weight:700;padding:2px 6px;border-radius:4px;color:#fff;background:#6366f1}
.method.get{background:#059669}.method.delete{background:#dc2626}.method.patch{background:#d97706}
pre.schema{background:#111827;color:#e5e7eb;padding:.5rem;border-radius:6px;overflow:auto;max-height:320px;font-size:12px}
</style></head>
<body><nav><strong>Reference</strong><ul>${nav}<li><a href="#events">webhook events</a></li></ul><p><a href="/openapi.json">openapi.json</a></p></nav>
<main><h1>${esc(doc.info?.title)}</h1><p>${esc(doc.info?.description)}</p>
<p>Authenticate with <code>Authorization: Bearer wak_…</code>. Errors are JSON <code>{ "error", "message" }</code>.</p>
${sections}
<h2 id="events">Webhook events</h2><ul>${events}</ul>
</main></body></html>`;
}
