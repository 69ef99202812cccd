/**
 * The HTML of GET /docs: the Scalar API reference (served by the service at /docs/scalar.js, no CDN),
 * with a server-rendered reference inside <noscript> for readers without JavaScript.
 */
const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const schemaBlock = (schema: unknown) => `<pre class="schema">${esc(JSON.stringify(schema, null, 2))}</pre>`;

/** The whole reference as plain HTML (no script): the no-JS fallback. */
export function renderFallback(doc: any): string {
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
  return `<style>
.fallback{font:15px/1.5 system-ui,sans-serif;display:flex;color:#1f2937}
.fallback nav{width:220px;padding:1rem;background:#f3f4f6;position:sticky;top:0;height:100vh;overflow:auto}
.fallback main{flex:1;padding:1rem 2rem;max-width:960px}
.fallback .op{border:1px solid #e5e7eb;border-radius:8px;padding:.5rem 1rem;margin:1rem 0}
.fallback .method{font-weight:700;padding:2px 6px;border-radius:4px;color:#fff;background:#6366f1}
.fallback .method.get{background:#059669}.fallback .method.delete{background:#dc2626}.fallback .method.patch{background:#d97706}
.fallback pre.schema{background:#111827;color:#e5e7eb;padding:.5rem;border-radius:6px;overflow:auto;max-height:320px;font-size:12px}
</style>
<div class="fallback"><nav><strong>Reference</strong><ul>${nav}<li><a href="#events">webhook events</a></li></ul><p><a href="openapi.json">openapi.json</a></p></nav>
<main><h1>${esc(doc.info?.title)}</h1><p>${esc(doc.info?.description)}</p>
<p>Authenticate with <code>Authorization: Bearer wak_…</code>. Errors are JSON <code>{ "error", "message" }</code>.</p>
${sections}
<h2 id="events">Webhook events</h2><ul>${events}</ul>
</main></div>`;
}

/** Scalar's configuration: everything local (no fonts or proxy from a CDN), the document from this service. */
const scalarConfig = {
  url: 'openapi.json',
  withDefaultFonts: false,
  defaultOpenAllTags: true,
  hideClientButton: true,
  proxyUrl: '',
  telemetry: false,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
};

/** The docs page. Paths are relative so it also works behind a stage or path prefix. */
export function renderDocs(doc: any): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info?.title)}</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>${renderFallback(doc)}</noscript>
<div id="app"></div>
<script src="docs/scalar.js"></script>
<script>Scalar.createApiReference('#app', ${JSON.stringify(scalarConfig)});</script>
</body></html>`;
}
