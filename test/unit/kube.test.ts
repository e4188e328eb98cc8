import { acceptsJson } from '../../lib/http/kube/replies.ts';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { applyMergePatch } from '../../lib/domain/objects/merge-patch.ts';
import { humanDuration, wantsTable } from '../../lib/http/kube/table.ts';
import { RESOURCES } from '../../lib/domain/kinds.ts';
import { ALL_ROUTES, KUBE_ROUTES, ROUTES, matchRoute, type Route } from '../../lib/http/routes.ts';

describe('applyMergePatch (RFC 7386)', () => {
  // The RFC's appendix A, case by case.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('%j patched with %j is %j', (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result);
  });

  it('changes neither argument, and keeps "__proto__" a plain key', () => {
    const target = { a: { b: 1 } };
    const patch = JSON.parse('{"a":{"c":2},"__proto__":{"polluted":true}}');
    const result = applyMergePatch(target, patch) as Record<string, unknown>;
    expect(target).toEqual({ a: { b: 1 } });
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(['a', '__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('patching with the target itself changes nothing', () => {
    const json = fc.jsonValue().filter((value) => !JSON.stringify(value).includes('null'));
    fc.assert(
      fc.property(json, (value) => {
        expect(applyMergePatch(value, value)).toEqual(value);
      }),
    );
  });
});

describe('humanDuration (kubectl’s ages)', () => {
  it.each([
    [0, '0s'],
    [-1500, '0s'],
    [-5000, '<invalid>'],
    [119_000, '119s'],
    [120_000, '2m'],
    [185_000, '3m5s'],
    [600_000, '10m'],
    [179 * 60_000, '179m'],
    [3 * 3600_000, '3h'],
    [(5 * 60 + 3) * 60_000, '5h3m'],
    [47 * 3600_000, '47h'],
    [(3 * 24 + 4) * 3600_000, '3d4h'],
    [10 * 86400_000, '10d'],
    [800 * 86400_000, '2y70d'],
    [9 * 365 * 86400_000, '9y'],
  ])('%d ms is %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('acceptsJson', () => {
  it('takes application/json without as=, application/*, */*, or no header; not a Table alone or q=0', () => {
    for (const accept of [
      undefined,
      '',
      'application/json',
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
      'application/*',
      '*/*',
      'text/html, */*;q=0.1',
      'APPLICATION/JSON; charset=utf-8',
    ])
      expect(acceptsJson(accept), String(accept)).toBe(true);
    for (const accept of [
      'application/json;as=Table;v=v1;g=meta.k8s.io',
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io',
      'application/yaml',
      'application/json;q=0',
      'text/plain',
    ])
      expect(acceptsJson(accept), accept).toBe(false);
  });
});

describe('wantsTable', () => {
  it('sees kubectl’s Accept, and nothing else', () => {
    expect(
      wantsTable(
        'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
      ),
    ).toBe(true);
    expect(wantsTable('application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json')).toBe(false);
    expect(wantsTable('application/json')).toBe(false);
    expect(wantsTable(undefined)).toBe(false);
  });
});

describe('the Kubernetes routes', () => {
  const GROUP_VERSION = '/apis/pool.networking.metal.ironcore.dev/v1alpha1';
  const v1 = ROUTES.filter((route) => route.resource);

  it('serve every /v1 resource route under the group version, to the same operation and function', () => {
    const twin = (route: Route) =>
      KUBE_ROUTES.find(
        (kube) => kube.method === route.method && kube.path === route.path.replace('/v1', GROUP_VERSION),
      );
    for (const route of v1)
      expect(twin(route), `${route.method} ${route.path}`).toMatchObject({
        operation: route.operation,
        function: route.function,
        resource: route.resource,
        kube: true,
      });
  });

  it('add PATCH on every item, claims on the claim function, lists across namespaces, and seven discovery routes', () => {
    const patches = KUBE_ROUTES.filter((route) => route.method === 'PATCH');
    expect(patches.map((route) => [route.resource, route.operation, route.function])).toEqual(
      RESOURCES.map((resource) =>
        resource === 'claims' ? [resource, 'patchClaim', 'claim'] : [resource, 'patch', 'api'],
      ),
    );
    expect(
      KUBE_ROUTES.filter((route) => !route.resource).map((route) => `${route.method} ${route.path}`),
    ).toEqual([
      'GET /api',
      'GET /apis',
      'GET /apis/pool.networking.metal.ironcore.dev',
      `GET ${GROUP_VERSION}`,
      'GET /openapi/v3',
      `GET /openapi/v3${GROUP_VERSION}`,
      'GET /version',
    ]);
    expect(
      KUBE_ROUTES.filter((route) => route.operation === 'listEveryNamespace').map((route) => route.path),
    ).toEqual(RESOURCES.map((resource) => `${GROUP_VERSION}/${resource}`));
    expect(ALL_ROUTES).toEqual([...ROUTES, ...KUBE_ROUTES]);
  });

  it('leave /v1 without PATCH, as the contract has it', () => {
    expect(ROUTES.filter((route) => route.method === 'PATCH')).toEqual([]);
    expect(matchRoute('PATCH', '/v1/namespaces/default/claims/c').allowed).toEqual(['GET', 'PUT', 'DELETE']);
    expect(matchRoute('POST', `${GROUP_VERSION}/namespaces/default/claims/c`).allowed).toEqual([
      'GET',
      'PUT',
      'DELETE',
      'PATCH',
    ]);
  });
});
