/**
 * `node:http` in function packages (an esbuild alias, infra/bundling.ts), without its ES module facade. Node builds
 * that facade by reading every export of the built-in, and three of `http`'s exports (`WebSocket`, `CloseEvent`,
 * `MessageEvent`) are getters that load Node's own copy of undici: about 40 ms of CPU at a cold start, more than the
 * whole DynamoDB client costs, for a WebSocket no function uses. `process.getBuiltinModule` hands over the module's
 * exports as they are, getters untouched.
 */
const http = process.getBuiltinModule('node:http');

export default http;
export const {
  Agent, ClientRequest, IncomingMessage, METHODS, OutgoingMessage, STATUS_CODES, Server, ServerResponse,
  createServer, get, request, validateHeaderName, validateHeaderValue,
} = http;
