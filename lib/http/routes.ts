/**
 * The one route table (api.md, "Routes"). The CDK construct adds an HTTP API route per entry, pointing at
 * the entry's function; the local server dispatches from the same array. Plain data.
 */
import { API_VERSION, poolInfoByResource, RESOURCES, type Resource } from '../domain/kinds.ts';

export const KUBE_GROUP = API_VERSION.split('/')[0]!;
export const KUBE_VERSION = API_VERSION.split('/')[1]!;
/** Where the Kubernetes paths start: `/apis/pool.networking.metal.ironcore.dev/v1alpha1`. */
export const KUBE_PREFIX = `/apis/${API_VERSION}`;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * The Lambda functions that serve routes: claims have their own, so they scale and alarm apart; the
 * repair sweep's, which also runs on a schedule, serves the on-demand sweep.
 */
export type ApiFunctionName = 'api' | 'claim' | 'release' | 'repair';

/** The operations of the contract's `/v1` routes. */
export type V1OperationName =
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
  | 'renewClaim'
  | 'occupancy'
  | 'preview'
  | 'repair'
  | 'sharedPools'
  | 'history';

export type OperationName =
  | V1OperationName
  | 'watch'
  | 'listEveryNamespace'
  | 'version'
  | 'patch'
  | 'patchClaim'
  | 'kubeApiVersions'
  | 'kubeGroups'
  | 'kubeGroup'
  | 'kubeResources'
  | 'kubeOpenApi'
  | 'kubeOpenApiGroup';

export interface Route {
  readonly method: HttpMethod;
  /** API Gateway path syntax: `{name}` is a path parameter. */
  readonly path: string;
  readonly operation: OperationName;
  readonly function: ApiFunctionName;
  /** The resource path a namespaced route serves. */
  readonly resource?: Resource;
  /**
   * A Kubernetes path (`/apis/…`): its lists carry `kind` and `apiVersion`, and its GETs answer a
   * `Table` when the `Accept` header asks for one.
   */
  readonly kube?: true;
}

function resourceRoutes(resource: Resource, base = '/v1'): Route[] {
  const collection = `${base}/namespaces/{namespace}/${resource}`;
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
    // Who held the values (service/operations/history.ts): a pool's, or every claim's of that name.
    ...(claims || poolInfoByResource(resource)
      ? [{ method: 'GET', path: `${item}/history`, operation: 'history', function: 'api', resource } as const]
      : []),
    // A lease starts again (service/operations/renew.ts); on the claim function, with the claim's writes.
    ...(claims
      ? [
          {
            method: 'POST',
            path: `${item}/renew`,
            operation: 'renewClaim',
            function: 'claim',
            resource,
          } as const,
        ]
      : []),
    // The map of a pool's space (service/operations/occupancy.ts), on /v1 and the Kubernetes paths alike.
    ...(poolInfoByResource(resource)
      ? [
          {
            method: 'GET',
            path: `${item}/occupancy`,
            operation: 'occupancy',
            function: 'api',
            resource,
          } as const,
          // What claims made now would get: a pool's subresource, reads only.
          {
            method: 'GET',
            path: `${item}/preview`,
            operation: 'preview',
            function: 'api',
            resource,
          } as const,
        ]
      : []),
  ];
}

/** The contract's `/v1` routes. */
export const ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v1/healthz', operation: 'healthz', function: 'api' },
  { method: 'GET', path: '/v1/openapi.json', operation: 'openapi', function: 'api' },
  ...RESOURCES.flatMap((resource) => resourceRoutes(resource)),
  // The repair sweep of one namespace, on demand (`allot repair`); `?dryRun=true` changes nothing.
  { method: 'POST', path: '/v1/namespaces/{namespace}/repair', operation: 'repair', function: 'repair' },
  // The pools of other namespaces shared with this one (service/operations/shared-pools.ts).
  {
    method: 'GET',
    path: '/v1/namespaces/{namespace}/sharedpools',
    operation: 'sharedPools',
    function: 'api',
  },
];

/**
 * The Kubernetes paths (api.md, "Routes"): discovery, OpenAPI v3, and each resource under its group
 * version with the `/v1` routes' operations and functions, plus PATCH (a merge patch; claims' on the
 * claim function, which allocates).
 */
export const KUBE_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/api', operation: 'kubeApiVersions', function: 'api', kube: true },
  { method: 'GET', path: '/apis', operation: 'kubeGroups', function: 'api', kube: true },
  { method: 'GET', path: `/apis/${KUBE_GROUP}`, operation: 'kubeGroup', function: 'api', kube: true },
  { method: 'GET', path: KUBE_PREFIX, operation: 'kubeResources', function: 'api', kube: true },
  { method: 'GET', path: '/openapi/v3', operation: 'kubeOpenApi', function: 'api', kube: true },
  {
    method: 'GET',
    path: `/openapi/v3${KUBE_PREFIX}`,
    operation: 'kubeOpenApiGroup',
    function: 'api',
    kube: true,
  },
  // `kubectl version`: the server's version, as a Kubernetes API server answers it.
  { method: 'GET', path: '/version', operation: 'version', function: 'api', kube: true },
  ...RESOURCES.flatMap((resource): Route[] => [
    ...resourceRoutes(resource, KUBE_PREFIX).map((route): Route => ({ ...route, kube: true })),
    // Across every namespace (`kubectl get -A`).
    {
      method: 'GET',
      path: `${KUBE_PREFIX}/${resource}`,
      operation: 'listEveryNamespace',
      function: 'api',
      resource,
      kube: true,
    },
    {
      method: 'PATCH',
      path: `${KUBE_PREFIX}/namespaces/{namespace}/${resource}/{name}`,
      operation: resource === 'claims' ? 'patchClaim' : 'patch',
      function: resource === 'claims' ? 'claim' : 'api',
      resource,
      kube: true,
    },
  ]),
];

/** Every route served: what the CDK construct adds to the HTTP API and the handler dispatches from. */
export const ALL_ROUTES: readonly Route[] = [...ROUTES, ...KUBE_ROUTES];

export const API_FUNCTIONS: readonly ApiFunctionName[] = ['api', 'claim', 'release', 'repair'];

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
  routes: readonly Route[] = ALL_ROUTES,
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
