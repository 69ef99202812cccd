/**
 * Which route takes a request, as API Gateway decides it (a path's literal segments beat parameters), and the
 * answer when none does: 405 with `Allow` for a known path asked with another method, else 404 `not_found`.
 * One rule for both runtimes: the local server (infra/local/server.ts) and, in AWS, the function behind the
 * HTTP API's `$default` route (functions/http/meta/not-found.ts).
 */
import { json, type Reply } from './reply.ts';
import { GRAPH_PATH, graphErrorBody } from '#shared/cloud-api/graph-error.ts';

export interface RoutePattern {
  method: string;
  /** `/segments/{id}/contacts/{contactId}`: literal segments and `{name}` parameters. */
  path: string;
}

export type RouteMatch<R> = { route: R; params: Record<string, string> } | { allowed: string[] } | undefined;

interface Compiled<R> {
  route: R;
  regex: RegExp;
  names: string[];
  literalSegments: number;
}

const compile = <R extends RoutePattern>(route: R): Compiled<R> => {
  const names: string[] = [];
  const segments = route.path.split('/').filter(Boolean);
  const pattern = segments
    .map((seg) => {
      const m = /^\{(\w+)\}$/.exec(seg);
      if (m) {
        names.push(m[1]);
        return '/([^/]+)';
      }
      return `/${seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
    })
    .join('');
  return { route, regex: new RegExp(`^${pattern}/?$`), names, literalSegments: segments.filter((s) => !s.startsWith('{')).length };
};

const decode = (raw: string) => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

/**
 * A matcher over `routes`: the route and its decoded path parameters, or the methods the path allows, or nothing.
 * A path is owned by its most specific pattern: `/team/v1` belongs to `GET /team/v1`, so `DELETE /team/v1` is a
 * 405 naming GET, not a call of the Cloud-API-compatible `DELETE /{version}/{id}`.
 */
export function routeMatcher<R extends RoutePattern>(routes: readonly R[]): (method: string, path: string) => RouteMatch<R> {
  // API Gateway picks the most specific route: more literal segments first.
  const compiled = routes.map(compile).sort((a, b) => b.literalSegments - a.literalSegments);
  return (method, path) => {
    const allowed: string[] = [];
    let owner: number | undefined;
    for (const c of compiled) {
      if (owner !== undefined && c.literalSegments < owner) break;
      const m = c.regex.exec(path);
      if (!m) continue;
      owner = c.literalSegments;
      if (c.route.method !== method) {
        // A Cloud API pattern (`/{version}/...`) takes any first segment, as API Gateway matches it, but only a path
        // that names a version (`/v23.0/...`) is one of its paths: `POST /team/v2` is unknown (404), not a 405.
        if (!c.route.path.startsWith('/{version}/') || GRAPH_PATH.test(path)) allowed.push(c.route.method);
        continue;
      }
      return { route: c.route, params: Object.fromEntries(c.names.map((name, i) => [name, decode(m[i + 1])])) };
    }
    return allowed.length ? { allowed: [...new Set(allowed)] } : undefined;
  };
}

/** The methods a route of the table may have; API Gateway matches each request by method and path. */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The requests API Gateway would hand to another route than the one whose path they name: it picks a route by method
 * and path together, so `DELETE /team/v1` (a path without a DELETE route) is taken by `DELETE /{version}/{id}`, where
 * the rule above answers 405 (the path belongs to its most specific pattern). The stack routes each of these method and
 * path pairs to the not-found function, which answers them by that rule. A path's parameters are tried as plain values.
 */
export function shadowedMethods<R extends RoutePattern>(routes: readonly R[]): RoutePattern[] {
  const compiled = routes.map(compile);
  const paths = [...new Set(routes.map((r) => r.path))];
  return paths.flatMap((path) => {
    const sample = path.replace(/\{\w+\}/g, 'x');
    const own = new Set(routes.filter((r) => r.path === path).map((r) => r.method));
    return METHODS.filter((method) => !own.has(method) && compiled.some((c) => c.route.method === method && c.route.path !== path && c.regex.test(sample)))
      .map((method) => ({ method, path }));
  });
}

/**
 * The answer to a request no route takes (`allowed`: the methods its path has, if any). On a Cloud API path
 * (`/vNN.N/...`) in the Graph API's error shape, as Meta answers an unsupported request (code 100).
 */
export const noRouteReply = (method: string, path: string, allowed: string[] = [], traceId = 'local'): Reply => {
  const headers: Record<string, string> = allowed.length ? { allow: allowed.join(', ') } : {};
  const status = allowed.length ? 405 : 404;
  if (GRAPH_PATH.test(path)) {
    const details = allowed.length ? `Allowed methods: ${allowed.join(', ')}` : `No route for ${method} ${path}`;
    return json(status, graphErrorBody(100, 'GraphMethodException', `Unsupported ${method.toLowerCase()} request on ${path}`, details, traceId), headers);
  }
  return allowed.length
    ? json(405, { error: 'method_not_allowed', message: `${method} is not allowed on ${path}; allowed methods: ${allowed.join(', ')}` }, headers)
    : json(404, { error: 'not_found', message: `No route for ${method} ${path}` });
};
