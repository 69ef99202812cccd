import { chromium } from 'playwright-core';
const ctx = await chromium.launchPersistentContext('/tmp/h8/prof' + Date.now(), { executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const page = await ctx.newPage();
page.on('console', async (m) => { if (m.type()==='warning') { for (const a of m.args()) { const v:any = await a.jsonValue().catch(()=>null); console.log('ARG', Array.isArray(v) ? v.map((x:any)=>x.path).join(' ') : v) } } });
import { readFileSync } from 'node:fs';
const js = readFileSync('node_modules/@scalar/api-reference/dist/browser/standalone.js', 'utf8');
await page.route('http://local.test/**', (r) => r.request().url().endsWith('.js') ? r.fulfill({ body: js, contentType: 'text/javascript' }) : r.fulfill({ body: '<html><body><div id="app"></div><script src="/s.js"></script></body></html>', contentType: 'text/html' }));
await page.goto('http://local.test/');
const S = (x: any) => x;
const schemas: Record<string, unknown> = {
  EmptyProp: { type: 'object', properties: { a: {} } },
  Desc: { type: 'object', description: 'd', properties: { a: { type: 'string' } } },
  Required: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } },
  RequiredFirst: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
  NullAnyOf: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  NullProp: { type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] } } },
  EnumNoType: { type: 'object', properties: { a: { enum: ['x', 'y'] } } },
  ConstNoType: { type: 'object', properties: { a: { const: 'x' } } },
  AddProps: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  Fmt: { type: 'object', properties: { a: { type: 'string', format: 'uuid' } } },
};
await page.evaluate((doc) => (window as any).Scalar.createApiReference('#app', { content: doc, withDefaultFonts: false }), (() => { const d = JSON.parse(readFileSync('/tmp/h8/doc.json','utf8')); const mode = process.env.MODE; if (mode === 'nopaths') { d.paths = {}; d.webhooks = {}; } if (mode === 'only') { d.paths = {}; d.webhooks = {}; d.components.schemas = { Error: d.components.schemas.Error, TeamAgent: d.components.schemas.TeamAgent, AiSettings: d.components.schemas.AiSettings }; } if (mode === 'nowebhooks') d.webhooks = {}; if (mode?.startsWith('ref:')) { d.webhooks = {}; const names = mode.slice(4).split(','); d.paths = Object.fromEntries(names.map((n, i) => [`/p${i}`, { get: { responses: { 200: { description: 'x', content: { 'application/json': { schema: n.startsWith('any') ? { [process.env.KW ?? 'anyOf']: n.slice(3).split('+').map((m) => ({ $ref: `#/components/schemas/${m}` })) } : { $ref: `#/components/schemas/${n}` } } } } } } }])); } return d; })());
await page.waitForTimeout(4000);
await ctx.close(); process.exit(0);
