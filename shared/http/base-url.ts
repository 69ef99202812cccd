/**
 * The public base URL a request came to (`https://<api-id>.execute-api...` in AWS, `http://127.0.0.1:3000` locally),
 * for links the service hands out that point back at itself. API Gateway says the protocol in `x-forwarded-proto`.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export function baseUrlOf(event: Pick<APIGatewayProxyEventV2, 'headers'>): string | undefined {
  const host = event.headers?.host;
  if (!host) return undefined;
  const proto = event.headers?.['x-forwarded-proto'] ?? (host.startsWith('127.0.0.1') || host.startsWith('localhost') ? 'http' : 'https');
  return `${proto}://${host}`;
}
