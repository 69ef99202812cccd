/**
 * GET /openapi.json: the OpenAPI 3.1 document. A synth generates it and ships it beside the bundle (so this function
 * does not carry every other handler); run from the sources (the local server), it is built on first use from the
 * handler modules themselves. A package without it fails loudly: the handler modules are not in it.
 */
import { readFile } from 'node:fs/promises';
import { baseUrlOf } from '#shared/http/base-url.ts';
import { publicEndpoint } from '#shared/http/public-endpoint.ts';

let cached: Promise<Record<string, unknown>> | undefined;

const documentOnce = () =>
  (cached ??= readFile(new URL('./openapi.json', import.meta.url), 'utf8')
    .then((text) => JSON.parse(text) as Record<string, unknown>)
    .catch(async () => {
      // Local and test runs build it from the handler modules (loaded lazily, so a deployed cold start never pays for it).
      const { buildOpenApi, loadSpecs } = await import('#shared/openapi/document.ts');
      // A computed specifier, so that bundlers leave it alone (a template literal would pull every handler into this bundle).
      const moduleUrl = (handler: string) => new URL(`../../${handler}.ts`, import.meta.url).href;
      return buildOpenApi(await loadSpecs((handler) => import(moduleUrl(handler))));
    }));

/** The document, naming the base URL the request came in by (also what the /docs page renders). */
export async function openApiDocument(event: Parameters<typeof baseUrlOf>[0]): Promise<Record<string, unknown>> {
  const doc = await documentOnce();
  const base = baseUrlOf(event);
  return base ? { ...doc, servers: [{ url: base }] } : doc;
}

export const { handler, spec } = publicEndpoint(
  { route: 'GET /openapi.json', summary: 'The OpenAPI 3.1 document of this API', responses: { 200: 'OpenAPI document' } },
  async ({ event }) => ({ status: 200, body: await openApiDocument(event) }),
);
