import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { RESOURCES } from '../../lib/domain/kinds.ts';
import { API_FUNCTIONS, ROUTES, matchRoute, type Route } from '../../lib/http/routes.ts';

/** A concrete request path for a route: `{namespace}` → default, `{name}` → my-object. */
function concrete(
  route: Route,
  params: Record<string, string> = { namespace: 'default', name: 'my-object' },
) {
  return route.path.replace(/\{(\w+)\}/g, (_, param: string) => params[param]!);
}

const label = (route: Route) => `${route.method} ${route.path}`;

describe('the route table', () => {
  it("serves healthz, openapi.json, five routes per resource, the map, the preview and the history of each pool kind, a claim's renewal and history, the repair sweep and the pools shared with a namespace", () => {
    expect(ROUTES).toHaveLength(2 + 5 * RESOURCES.length + 3 + 3 + 3 + 1 + 1 + 1 + 1);
    expect(ROUTES.filter((route) => route.operation === 'history').map(label)).toEqual(
      ['indexpools', 'ipaddresspools', 'ipprefixpools', 'claims'].map(
        (resource) => `GET /v1/namespaces/{namespace}/${resource}/{name}/history`,
      ),
    );
    expect(ROUTES.filter((route) => route.operation === 'repair').map(label)).toEqual([
      'POST /v1/namespaces/{namespace}/repair',
    ]);
    expect(ROUTES.filter((route) => route.operation === 'sharedPools').map(label)).toEqual([
      'GET /v1/namespaces/{namespace}/sharedpools',
    ]);
    expect(RESOURCES).toEqual([
      'indexpools',
      'ipaddresspools',
      'ipprefixpools',
      'indices',
      'ipaddresses',
      'ipprefixes',
      'claims',
    ]);
  });

  it('has no two routes for one method and path', () => {
    const keys = ROUTES.map(label);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(RESOURCES.map((resource) => ({ resource })))(
    'serves the contract’s five routes for $resource (and renew for claims)',
    ({ resource }) => {
      const collection = `/v1/namespaces/{namespace}/${resource}`;
      const item = `${collection}/{name}`;
      expect(
        ROUTES.filter((route) => route.resource === resource && route.operation !== 'occupancy')
          .map(label)
          .sort(),
      ).toEqual(
        [
          `DELETE ${item}`,
          `GET ${collection}`,
          `GET ${item}`,
          `POST ${collection}`,
          `PUT ${item}`,
          ...(resource.endsWith('pools') ? [`GET ${item}/preview`] : []),
          ...(resource.endsWith('pools') || resource === 'claims' ? [`GET ${item}/history`] : []),
          ...(resource === 'claims' ? [`POST ${item}/renew`] : []),
        ].sort(),
      );
    },
  );

  it('serves the occupancy map of each pool kind from the api function', () => {
    expect(
      ROUTES.filter((route) => route.operation === 'occupancy').map((r) => `${label(r)} ${r.function}`),
    ).toEqual(
      ['indexpools', 'ipaddresspools', 'ipprefixpools'].map(
        (resource) => `GET /v1/namespaces/{namespace}/${resource}/{name}/occupancy api`,
      ),
    );
  });

  it('sends claim writes to the claim function and claim deletes to the release function', () => {
    const claims = ROUTES.filter((route) => route.resource === 'claims');
    expect(
      Object.fromEntries(claims.map((route) => [label(route), [route.operation, route.function]])),
    ).toEqual({
      'GET /v1/namespaces/{namespace}/claims': ['list', 'api'],
      'POST /v1/namespaces/{namespace}/claims': ['createClaim', 'claim'],
      'GET /v1/namespaces/{namespace}/claims/{name}': ['read', 'api'],
      'PUT /v1/namespaces/{namespace}/claims/{name}': ['replaceClaim', 'claim'],
      'DELETE /v1/namespaces/{namespace}/claims/{name}': ['deleteClaim', 'release'],
      'POST /v1/namespaces/{namespace}/claims/{name}/renew': ['renewClaim', 'claim'],
      'GET /v1/namespaces/{namespace}/claims/{name}/history': ['history', 'api'],
    });
  });

  it('sends everything but claims and the repair sweep to the api function', () => {
    for (const route of ROUTES.filter((r) => r.resource !== 'claims'))
      expect(route.function).toBe(route.operation === 'repair' ? 'repair' : 'api');
    expect(API_FUNCTIONS).toEqual(['api', 'claim', 'release', 'repair']);
  });
});

describe('matchRoute', () => {
  it.each(ROUTES.map((route) => ({ route, name: label(route) })))(
    'matches $name with its params',
    ({ route }) => {
      const result = matchRoute(route.method, concrete(route));
      expect(result.match?.route).toBe(route);
      const expected: Record<string, string> = {};
      if (route.path.includes('{namespace}')) expected.namespace = 'default';
      if (route.path.includes('{name}')) expected.name = 'my-object';
      expect(result.match?.params).toEqual(expected);
    },
  );

  it.each([
    '/',
    '',
    '/v1',
    '/v2/healthz',
    '/v1/nope',
    '/v1/healthz/',
    '/healthz',
    '/v1/namespaces',
    '/v1/namespaces/default',
    '/v1/namespaces/default/widgets',
    '/v1/namespaces/default/widgets/a',
    '/v1/namespaces/default/indexpools/a/b',
    '/v1/namespaces/default/indexpools/',
    '/v1/namespaces//indexpools',
    '/v1/namespaces//indexpools/a',
    '/v1/namespaces/default/IndexPools',
    '//v1/healthz',
  ])('finds no route and no allowed methods for %j', (path) => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) {
      expect(matchRoute(method, path)).toEqual({ allowed: [] });
    }
  });

  it.each([
    { method: 'PATCH', path: '/v1/namespaces/default/indexpools/p', allowed: ['GET', 'PUT', 'DELETE'] },
    { method: 'POST', path: '/v1/namespaces/default/claims/c', allowed: ['GET', 'PUT', 'DELETE'] },
    { method: 'DELETE', path: '/v1/namespaces/default/claims', allowed: ['GET', 'POST'] },
    { method: 'PUT', path: '/v1/namespaces/default/indices', allowed: ['GET', 'POST'] },
    { method: 'POST', path: '/v1/healthz', allowed: ['GET'] },
    { method: 'DELETE', path: '/v1/openapi.json', allowed: ['GET'] },
    { method: 'HEAD', path: '/v1/healthz', allowed: ['GET'] },
    { method: 'get', path: '/v1/healthz', allowed: ['GET'] },
  ])('answers $method $path with no match and the served methods $allowed', ({ method, path, allowed }) => {
    const result = matchRoute(method, path);
    expect(result.match).toBeUndefined();
    expect([...result.allowed].sort()).toEqual([...allowed].sort());
  });

  it.each([
    { encoded: 'my%2Dclaim', decoded: 'my-claim' },
    { encoded: '%61bc', decoded: 'abc' },
    { encoded: 'a%2Fb', decoded: 'a/b' },
    { encoded: 'a%20b', decoded: 'a b' },
    { encoded: '%C3%A9', decoded: 'é' },
  ])('decodes the percent-encoded name $encoded as $decoded', ({ encoded, decoded }) => {
    const result = matchRoute('GET', `/v1/namespaces/default/claims/${encoded}`);
    expect(result.match?.route.operation).toBe('read');
    expect(result.match?.params.name).toBe(decoded);
  });

  it('decodes a percent-encoded namespace', () => {
    expect(matchRoute('GET', '/v1/namespaces/d%65fault/claims').match?.params).toEqual({
      namespace: 'default',
    });
  });

  it.each(['%', '%E0%A4%A', '%zz', 'a%2', '%C3'])(
    'does not throw on the malformed name %j, and matches nothing',
    (bad) => {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        let result: ReturnType<typeof matchRoute> | undefined;
        expect(() => {
          result = matchRoute(method, `/v1/namespaces/default/claims/${bad}`);
        }).not.toThrow();
        expect(result!.match).toBeUndefined();
      }
    },
  );

  it('never throws on any path', () => {
    fc.assert(
      fc.property(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'), fc.string(), (method, path) => {
        matchRoute(method, path);
        matchRoute(method, `/v1/namespaces/${path}/claims/${path}`);
      }),
    );
  });

  it('round-trips any encoded name through its route', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (name) => {
        const result = matchRoute('DELETE', `/v1/namespaces/default/indexpools/${encodeURIComponent(name)}`);
        expect(result.match?.route.operation).toBe('delete');
        expect(result.match?.params.name).toBe(name);
      }),
    );
  });

  it('matches against a given route table', () => {
    const routes: Route[] = [{ method: 'GET', path: '/x/{id}', operation: 'read', function: 'api' }];
    expect(matchRoute('GET', '/x/7', routes).match?.params).toEqual({ id: '7' });
    expect(matchRoute('GET', '/v1/healthz', routes)).toEqual({ allowed: [] });
  });
});
