/**
 * The HTTP API's `$default` function (functions/http/meta/not-found.ts): what API Gateway hands it for every request
 * no route takes, answered as decisions.md says — and as the local server answers (one rule, shared/http/route-match.ts).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { handler } from '#functions/http/meta/not-found.ts';

const event = (method: string, path: string) => ({
  version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: '', headers: {}, isBase64Encoded: false,
  requestContext: { http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.1', userAgent: 'test' }, routeKey: '$default', stage: '$default' },
}) as unknown as APIGatewayProxyEventV2;

describe('$default: requests no route takes', () => {
  it('answers an unknown path 404 not_found', async () => {
    const res = await handler(event('GET', '/nope/v1'));
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body!)).toEqual({ error: 'not_found', message: 'No route for GET /nope/v1' });
  });

  it('answers a known path asked with another method 405 with Allow (parameters match any segment)', async () => {
    const res = await handler(event('DELETE', '/team/v1'));
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(JSON.parse(res.body!)).toMatchObject({ error: 'method_not_allowed' });
    const withParams = await handler(event('PUT', '/segments/seg_1'));
    expect(withParams.statusCode).toBe(405);
    expect(withParams.headers.allow.split(', ').sort()).toEqual(['DELETE', 'GET', 'PATCH']);
  });

  it('answers 404 for a two-segment path that names no version, though the Cloud API pattern /{version}/{id} takes it for GET and DELETE', async () => {
    const res = await handler(event('POST', '/team/v2'));
    const media = await handler(event('POST', '/v23.0/1055'));
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body!)).toEqual({ error: 'not_found', message: 'No route for POST /team/v2' });
    expect([media.statusCode, media.headers.allow]).toEqual([405, 'GET, DELETE']);
  });

  it('answers on a Cloud API path (/vNN.N/...) in the Graph API\'s error shape, code 100', async () => {
    const wrongMethod = await handler(event('GET', '/v23.0/1055/messages'));
    const unknown = await handler(event('GET', '/v23.0/1055/nothing/here'));
    expect([wrongMethod.statusCode, wrongMethod.headers.allow]).toEqual([405, 'POST']);
    expect(JSON.parse(wrongMethod.body!)).toEqual({ error: { message: '(#100) Unsupported get request on /v23.0/1055/messages', type: 'GraphMethodException', code: 100, error_data: { messaging_product: 'whatsapp', details: 'Allowed methods: POST' }, fbtrace_id: 'local' } });
    expect(unknown.statusCode).toBe(404);
    expect(JSON.parse(unknown.body!).error).toMatchObject({ code: 100, type: 'GraphMethodException' });
  });
});
