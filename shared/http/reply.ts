import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type Reply = APIGatewayProxyStructuredResultV2 & { statusCode: number; headers: Record<string, string> };

const baseHeaders = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): Reply => ({
  statusCode,
  headers: { ...baseHeaders, ...headers },
  body: JSON.stringify(body),
});

/** What a handler's `run` may return: a plain body (200) or an explicit status/body/headers. */
export type HandlerResult = { status: number; body: unknown; headers?: Record<string, string> };

export const result = (status: number, body: unknown, headers?: Record<string, string>): HandlerResult => ({
  status,
  body,
  headers,
});
