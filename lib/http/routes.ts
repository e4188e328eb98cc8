/**
 * The one route table (api.md, "Routes"). The CDK construct adds an HTTP API route per entry, pointing at
 * the entry's function; the local server dispatches from the same array. Plain data.
 */
import { RESOURCES, type Resource } from '../domain/kinds.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The Lambda functions that serve routes: claims have their own, so they scale and alarm apart. */
export type ApiFunctionName = 'api' | 'claim' | 'release';

export type OperationName =
  | 'healthz'
  | 'openapi'
  | 'list'
  | 'create'
  | 'read'
  | 'replace'
  | 'delete'
  | 'createClaim'
  | 'replaceClaim'
  | 'deleteClaim'
  | 'preview';

export interface Route {
  readonly method: HttpMethod;
  /** API Gateway path syntax: `{name}` is a path parameter. */
  readonly path: string;
  readonly operation: OperationName;
  readonly function: ApiFunctionName;
  /** The resource path a namespaced route serves. */
  readonly resource?: Resource;
}

function resourceRoutes(resource: Resource): Route[] {
  const collection = `/v1/namespaces/{namespace}/${resource}`;
  const item = `${collection}/{name}`;
  const claims = resource === 'claims';
  return [
    { method: 'GET', path: collection, operation: 'list', function: 'api', resource },
    {
      method: 'POST',
      path: collection,
      operation: claims ? 'createClaim' : 'create',
      function: claims ? 'claim' : 'api',
      resource,
    },
    { method: 'GET', path: item, operation: 'read', function: 'api', resource },
    {
      method: 'PUT',
      path: item,
      operation: claims ? 'replaceClaim' : 'replace',
      function: claims ? 'claim' : 'api',
      resource,
    },
    {
      method: 'DELETE',
      path: item,
      operation: claims ? 'deleteClaim' : 'delete',
      function: claims ? 'release' : 'api',
      resource,
    },
    // What claims made now would get: a pool's subresource, reads only.
    ...(resource.endsWith('pools')
      ? [{ method: 'GET', path: `${item}/preview`, operation: 'preview', function: 'api', resource } as const]
      : []),
  ];
}

export const ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v1/healthz', operation: 'healthz', function: 'api' },
  { method: 'GET', path: '/v1/openapi.json', operation: 'openapi', function: 'api' },
  ...RESOURCES.flatMap(resourceRoutes),
];

export const API_FUNCTIONS: readonly ApiFunctionName[] = ['api', 'claim', 'release'];

export interface RouteMatch {
  readonly route: Route;
  readonly params: Record<string, string>;
}

/**
 * Finds the route for a request. `allowed` lists the methods served on the path when the method is not
 * (so the caller answers 405, not 404).
 */
export function matchRoute(
  method: string,
  path: string,
  routes: readonly Route[] = ROUTES,
): { match?: RouteMatch; allowed: HttpMethod[] } {
  const allowed: HttpMethod[] = [];
  const got = path.split('/');
  for (const route of routes) {
    const params = matchPath(partsOf(route.path), got);
    if (!params) continue;
    if (route.method === method) return { match: { route, params }, allowed };
    allowed.push(route.method);
  }
  return { allowed };
}

// Every request walks the route table: its patterns are split once, not per request.
const patternParts = new Map<string, string[]>();

function partsOf(pattern: string): string[] {
  let parts = patternParts.get(pattern);
  if (!parts) patternParts.set(pattern, (parts = pattern.split('/')));
  return parts;
}

function matchPath(want: readonly string[], got: readonly string[]): Record<string, string> | undefined {
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const part = want[i]!;
    const actual = got[i]!;
    if (part.startsWith('{') && part.endsWith('}')) {
      if (actual === '') return undefined;
      let decoded: string;
      try {
        decoded = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
      params[part.slice(1, -1)] = decoded;
    } else if (part !== actual) {
      return undefined;
    }
  }
  return params;
}
