/**
 * GET /docs: the API reference as a readable page, rendered from the OpenAPI document (Scalar, served by the
 * service itself at /docs/scalar.js, no CDN; a server-rendered reference for readers without JavaScript), so it works
 * offline and in any browser.
 */
import { publicEndpoint } from '#shared/http/public-endpoint.ts';
import type { Reply } from '#shared/http/reply.ts';
import { renderDocs } from '#shared/openapi/render.ts';
import { openApiDocument } from './openapi.ts';

let page: string | undefined;

export const { handler, spec } = publicEndpoint(
  { route: 'GET /docs', summary: 'The API reference page (HTML)', responses: { 200: 'HTML page', 308: 'from /docs/ to /docs' } },
  async ({ event }): Promise<Reply> => {
    // The page loads its renderer and document by relative links, which /docs/ would resolve one level too deep.
    if (event.rawPath.endsWith('/')) return { statusCode: 308, headers: { location: '../docs' }, body: '' };
    page ??= renderDocs(await openApiDocument(event));
    return {
      statusCode: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' },
      body: page,
    };
  },
);
