/**
 * The error table of api.md ("Errors"), row by row, over HTTP: the Status body, its code and reason,
 * and that a rejected request writes nothing. Also the two fixed routes: healthz and the OpenAPI document.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, claim, client, indexPool, useTestAllot, type Answer } from '../helpers/allot.ts';

import { ROUTES } from '../../lib/http/routes.ts';
import { causeFields, expectFailure, expectInvalid } from './support.ts';

const { allot, api } = useTestAllot();

beforeAll(async () => {
  await api.post('indexpools', indexPool('existing', ['1..10']));
  await api.post('claims', claim('holder', { kind: 'IndexPool', name: 'existing' }));
});

const LIMIT = 64 * 1024;

/** Sends a raw body with the given headers (the helper's `call` sets JSON for objects only). */
function raw(method: string, path: string, body: string, headers: Record<string, string> = {}) {
  return api.call(method, path, body, { 'content-type': 'application/json', ...headers });
}

/** The Status body's details hold only kind, name and causes; each cause only field and message. */
function expectStatusDetails(answer: Answer) {
  const details = answer.body.details;
  if (details === undefined) return;
  for (const key of Object.keys(details)) expect(['kind', 'name', 'causes']).toContain(key);
  for (const cause of details.causes ?? []) {
    expect(Object.keys(cause).sort()).toEqual(['field', 'message']);
    expect(typeof cause.field).toBe('string');
    expect(typeof cause.message).toBe('string');
  }
}

describe('400 BadRequest', () => {
  it.each([
    ['malformed JSON', '{"metadata":'],
    ['JSON with a trailing comma', '{"metadata":{"name":"x"},}'],
    ['an array', '[]'],
    ['an array of objects', '[{"metadata":{"name":"x"}}]'],
    ['a string', '"indexpool"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])('answers a body that is %s', async (_what, body) => {
    const answer = await raw('POST', 'indexpools', body);
    expectFailure(answer, 400, 'BadRequest');
    expectStatusDetails(answer);
  });

  it('answers a POST without a body', async () => {
    expectFailure(await api.call('POST', 'indexpools'), 400, 'BadRequest');
  });

  it.each([
    ['PUT of a pool', 'PUT', 'indexpools/existing'],
    ['POST of a claim', 'POST', 'claims'],
    ['PUT of a claim', 'PUT', 'claims/holder'],
    ['POST of an allocation object', 'POST', 'indices'],
    ['PUT of an allocation object', 'PUT', 'indices/existing-1'],
  ])('answers a body that is an array on %s', async (_what, method, path) => {
    expectFailure(await raw(method, path, '[1,2]'), 400, 'BadRequest');
    expectFailure(await raw(method, path, '"text"'), 400, 'BadRequest');
  });

  it.each([
    ['limit=x', 'indexpools?limit=x'],
    ['limit=0', 'claims?limit=0'],
    ['limit=1001', 'indices?limit=1001'],
    ['a continue token not issued', 'claims?continue=abc'],
    ['a malformed pool filter', 'indices?pool=UPPER'],
    ['a malformed cascade flag', 'indexpools/existing?cascade=1'],
  ])('answers a malformed query parameter: %s', async (_what, path) => {
    const method = path.includes('cascade') ? 'DELETE' : 'GET';
    expectFailure(await api.call(method, path), 400, 'BadRequest');
  });
});

describe('404 NotFound', () => {
  it.each([
    ['an unknown top-level path', '/v1/nothing'],
    ['an unknown version', '/v2/healthz'],
    // (`/` itself is the console's page on the local server.)
    ['the API root', '/v1'],
    ['an unknown resource', '/v1/namespaces/default/widgets'],
    ['an unknown resource item', '/v1/namespaces/default/widgets/a'],
    ['a path below an item', '/v1/namespaces/default/indexpools/existing/status'],
    ['namespaces without a name', '/v1/namespaces'],
  ])('answers %s', async (_what, path) => {
    expectFailure(await api.get(path), 404, 'NotFound');
  });

  it.each([
    ['a pool', 'indexpools/missing'],
    ['a claim', 'claims/missing'],
    ['an allocation object', 'indices/missing-1'],
    ['an address object', 'ipaddresses/missing-10-0-0-1'],
    ['a prefix object', 'ipprefixes/missing'],
    ['a malformed name', 'indexpools/Missing'],
  ])('answers GET and DELETE of a missing object: %s', async (_what, path) => {
    const read = await api.get(path);
    expectFailure(read, 404, 'NotFound');
    expectStatusDetails(read);
    expectFailure(await api.delete(path), 404, 'NotFound');
  });

  it('names the missing object in details', async () => {
    const answer = await api.get('claims/missing');
    expect(answer.body.details).toMatchObject({ kind: 'Claim', name: 'missing' });
  });

  it.each([
    ['with uppercase', 'Default'],
    ['with _', 'my_ns'],
    ['of 64 characters', 'n'.repeat(64)],
  ])('answers a namespace path %s', async (_what, namespace) => {
    expectFailure(await api.get(`/v1/namespaces/${namespace}/indexpools`), 404, 'NotFound');
    expectFailure(
      await api.post(`/v1/namespaces/${namespace}/indexpools`, indexPool('x', ['1..2'])),
      404,
      'NotFound',
    );
  });

  it('lists any valid namespace, even one never written to, as empty', async () => {
    expect((await api.get('/v1/namespaces/never-used/claims')).body).toEqual({
      items: [],
      metadata: { resourceVersion: '999' },
    });
  });
});

describe('405 MethodNotAllowed', () => {
  it.each([
    ['PATCH on an item', 'PATCH', 'indexpools/existing'],
    ['PATCH on a collection', 'PATCH', 'claims'],
    ['DELETE on a collection', 'DELETE', 'indexpools'],
    ['PUT on a collection', 'PUT', 'claims'],
    ['POST on an item', 'POST', 'indices/existing-1'],
    ['POST on healthz', 'POST', '/v1/healthz'],
    ['DELETE on the OpenAPI document', 'DELETE', '/v1/openapi.json'],
  ])('answers %s', async (_what, method, path) => {
    const answer = await api.call(method, path);
    expectFailure(answer, 405, 'MethodNotAllowed');
  });

  it('answers 405 for a method on a missing item of a served path', async () => {
    expectFailure(await api.call('PATCH', 'indexpools/missing'), 405, 'MethodNotAllowed');
  });

  it('leaves the object alone', async () => {
    await api.call('PATCH', 'indexpools/existing', '{"spec":{"ranges":["1..2"]}}', {
      'content-type': 'application/json',
    });
    expect((await api.get('indexpools/existing')).body.spec.ranges).toEqual(['1..10']);
  });
});

describe('413 RequestEntityTooLarge', () => {
  function padded(bytes: number, name: string): string {
    const body = JSON.stringify(indexPool(name, ['1..2']));
    return body.slice(0, -1) + ' '.repeat(bytes - body.length) + '}';
  }

  it('answers a body over 64 KiB', async () => {
    const body = padded(LIMIT + 1, 'too-big');
    expect(Buffer.byteLength(body)).toBe(LIMIT + 1);
    expectFailure(await raw('POST', 'indexpools', body), 413, 'RequestEntityTooLarge');
    expectFailure(await api.get('indexpools/too-big'), 404, 'NotFound');
  });

  it('answers a much larger body', async () => {
    const body = JSON.stringify({
      ...indexPool('huge', ['1..2']),
      metadata: { name: 'huge', annotations: { a: 'x'.repeat(1_000_000) } },
    });
    expectFailure(await raw('POST', 'indexpools', body), 413, 'RequestEntityTooLarge');
  });

  it('counts bytes, not characters', async () => {
    const body = JSON.stringify({
      metadata: { name: 'multibyte', labels: { a: 'é'.repeat(40_000) } },
      spec: { ranges: ['1..2'] },
    });
    expect(body.length).toBeLessThan(LIMIT);
    expect(Buffer.byteLength(body)).toBeGreaterThan(LIMIT);
    expectFailure(await raw('POST', 'indexpools', body), 413, 'RequestEntityTooLarge');
  });

  it('accepts a body of exactly 64 KiB', async () => {
    const body = padded(LIMIT, 'just-fits');
    expect(Buffer.byteLength(body)).toBe(LIMIT);
    expect((await raw('POST', 'indexpools', body)).status).toBe(201);
  });
});

describe('415 UnsupportedMediaType', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['yaml', 'application/yaml'],
  ])('answers a body sent as %s', async (_what, type) => {
    const answer = await raw('POST', 'indexpools', JSON.stringify(indexPool('as-text', ['1..2'])), {
      'content-type': type,
    });
    expectFailure(answer, 415, 'UnsupportedMediaType');
    expectFailure(await api.get('indexpools/as-text'), 404, 'NotFound');
  });

  it('accepts application/json with a charset and +json types', async () => {
    const body = JSON.stringify(indexPool('with-charset', ['1..2']));
    expect(
      (await raw('POST', 'indexpools', body, { 'content-type': 'application/json; charset=utf-8' })).status,
    ).toBe(201);
    const other = JSON.stringify(indexPool('plus-json', ['1..2']));
    expect(
      (await raw('POST', 'indexpools', other, { 'content-type': 'application/vnd.allot+json' })).status,
    ).toBe(201);
  });

  it('does not mind the content type of a request without a body', async () => {
    expect(
      (await api.call('GET', 'indexpools/existing', undefined, { 'content-type': 'text/plain' })).status,
    ).toBe(200);
  });
});

describe('409', () => {
  it('answers AlreadyExists to a POST of a name that exists', async () => {
    const answer = await api.post('indexpools', indexPool('existing', ['1..2']));
    expectFailure(answer, 409, 'AlreadyExists');
    expect(answer.body.details).toMatchObject({ kind: 'IndexPool', name: 'existing' });
  });

  it('answers AlreadyExists to a second allocation object for a value', async () => {
    const answer = await api.post('indices', {
      metadata: { name: 'second-for-one' },
      spec: { poolRef: { kind: 'IndexPool', name: 'existing' }, index: 1 },
    });
    expectFailure(answer, 409, 'AlreadyExists');
  });

  it('answers PoolInUse to a DELETE of a pool with allocations', async () => {
    const answer = await api.delete('indexpools/existing');
    expectFailure(answer, 409, 'PoolInUse');
    expect(answer.body.details).toMatchObject({ kind: 'IndexPool', name: 'existing' });
  });
});

describe('422 Invalid', () => {
  it('names each failing field in details.causes', async () => {
    const answer = await api.post('indexpools', {
      apiVersion: 'v1',
      kind: 'IPAddressPool',
      metadata: { name: 'Not_Valid', namespace: 'elsewhere', labels: 'x' },
      spec: { ranges: ['5..1', 'x'], reclaimPolicy: 'Keep', unknown: true },
    });
    expectInvalid(
      answer,
      'apiVersion',
      'kind',
      'metadata.name',
      'metadata.namespace',
      'metadata.labels',
      'spec.ranges[0]',
      'spec.ranges[1]',
      'spec.reclaimPolicy',
      'spec.unknown',
    );
    expectStatusDetails(answer);
    expect(answer.body.details.kind).toBe('IndexPool');
  });

  it('names the fields of a claim and an allocation object', async () => {
    expectInvalid(
      await api.post('claims', {
        kind: 'Claim',
        metadata: { name: 'c' },
        spec: { poolRef: { name: 'x' }, owner: 'me' },
      }),
      'spec.poolRef.kind',
      'spec.owner',
    );
    expectInvalid(
      await api.post('indices', {
        metadata: { name: 'i' },
        spec: { poolRef: { kind: 'IndexPool', name: 'existing' } },
      }),
      'spec.index',
    );
  });

  it('answers an immutable field change', async () => {
    const answer = await api.put(
      'indexpools/existing',
      indexPool('existing', ['1..10'], { reclaimPolicy: 'Retain' }),
    );
    expectInvalid(answer, 'spec.reclaimPolicy');
  });

  it('answers a malformed name', async () => {
    expectInvalid(
      await api.post('claims', claim('a'.repeat(64), { kind: 'IndexPool', name: 'existing' })),
      'metadata.name',
    );
  });

  it.each([
    ['labels with a long value', { labels: { a: 'x'.repeat(1025) } }, 'metadata.labels[a]'],
    ['annotations with a long key', { annotations: { ['k'.repeat(254)]: 'v' } }, 'metadata.annotations'],
    ['annotations that are not strings', { annotations: { a: true } }, 'metadata.annotations[a]'],
    ['metadata that is not an object', 'name', 'metadata'],
  ])('answers %s', async (_what, metadata, field) => {
    const body =
      typeof metadata === 'string'
        ? { metadata, spec: { ranges: ['1..2'] } }
        : { metadata: { name: 'meta', ...metadata }, spec: { ranges: ['1..2'] } };
    const answer = await api.post('indexpools', body);
    expectFailure(answer, 422, 'Invalid');
    expect(causeFields(answer).some((named) => named.startsWith(field))).toBe(true);
  });
});

describe('bad input is never a 500', () => {
  const bodies: unknown[] = [
    {},
    { metadata: null },
    { metadata: { name: 'x' }, spec: null },
    { metadata: { name: 'x' }, spec: [] },
    { metadata: { name: 'x' }, spec: 'ranges' },
    { metadata: { name: 'x', labels: [] }, spec: { ranges: null } },
    { metadata: { name: 'x' }, spec: { ranges: [null, {}, [], 1e300, -0, '1..', '..1'] } },
    { metadata: { name: 'x' }, spec: { prefixes: [1, null, '::/0', '0.0.0.0/0'], exclude: 'x', gateway: 7 } },
    { metadata: { name: 'x' }, spec: { poolRef: null, value: {}, within: [], reserved: [null], owner: [] } },
    { metadata: { name: 'x' }, spec: { poolRef: { kind: 7, name: [] }, value: true } },
    {
      metadata: { name: 'x' },
      spec: { poolRef: { kind: 'IPPrefixPool', name: 'x' }, value: '::/0', within: '::/0' },
    },
    {
      metadata: { name: 'x' },
      spec: { poolRef: { kind: 'IndexPool', name: 'x' }, index: { n: 1 }, claimRef: [] },
    },
    {
      metadata: { name: 'x' },
      spec: {
        poolRef: { kind: 'IPAddressPool', name: 'x' },
        address: '::ffff:1.2.3.4',
        claimRef: { uid: 5 },
      },
    },
    {
      metadata: { name: 'x' },
      spec: { poolRef: { kind: 'IPPrefixPool', name: 'x' }, prefix: '10.0.0.0/99' },
    },
  ];
  const resources = [
    'indexpools',
    'ipaddresspools',
    'ipprefixpools',
    'claims',
    'indices',
    'ipaddresses',
    'ipprefixes',
  ];

  it.each(resources)('answers every odd body on %s with a 2xx or 4xx', async (resource) => {
    for (const body of bodies) {
      for (const answer of [await api.post(resource, body), await api.put(`${resource}/x`, body)]) {
        expect(
          answer.status,
          `${resource} ${JSON.stringify(body)} → ${JSON.stringify(answer.body)}`,
        ).toBeLessThan(500);
        if (answer.status >= 400) expectStatusDetails(answer);
      }
      await api.delete(`${resource}/x`);
    }
  });
});

describe('a rejected request', () => {
  it('writes nothing: every list is the same before and after', async () => {
    const ns = client(allot.url, 'untouched');
    await ns.post('indexpools', indexPool('stable', ['1..5']));
    await ns.post('claims', claim('stable-a', { kind: 'IndexPool', name: 'stable' }));
    await ns.post('indices', {
      metadata: { name: 'stable-pre' },
      spec: { poolRef: { kind: 'IndexPool', name: 'stable' }, index: 5 },
    });
    await allot.stream!.drained();
    await allot.history!.drained();
    // A list of allocation objects takes its resourceVersion from an entry some seconds old
    // (service/history/changes.ts): it moves with the clock, not with writes, so it is left out here.
    const snapshot = async () =>
      Promise.all(
        ['indexpools', 'claims', 'indices', 'ipaddresspools', 'ipaddresses'].map(async (resource) => {
          const body = (await ns.get(resource)).body;
          if (resource.endsWith('pools') || resource === 'claims') return body;
          return { ...body, metadata: { ...body.metadata, resourceVersion: undefined } };
        }),
      );
    const before = await snapshot();

    const rejected = [
      await ns.call('POST', 'indexpools', '{"metadata":', { 'content-type': 'application/json' }),
      await ns.call('POST', 'indexpools', '[]', { 'content-type': 'application/json' }),
      await ns.call('POST', 'indexpools', JSON.stringify(indexPool('new-one', ['1..2'])), {
        'content-type': 'text/plain',
      }),
      await ns.post('indexpools', indexPool('stable', ['1..9'])),
      await ns.post('indexpools', indexPool('new-two', ['1..5', '5..6'])),
      await ns.put('indexpools/stable', indexPool('stable', ['1..5'], { reclaimPolicy: 'Retain' })),
      await ns.put('indexpools/stable', indexPool('stable', ['x'])),
      await ns.put('indexpools/stable', indexPool('other-name', ['1..5'])),
      await ns.delete('indexpools/stable'),
      await ns.call('PATCH', 'indexpools/stable'),
      await ns.post('claims', claim('stable-a', { kind: 'IndexPool', name: 'stable' })),
      await ns.put('claims/stable-a', claim('stable-a', { kind: 'IndexPool', name: 'other' })),
      await ns.put('claims/stable-a', claim('stable-a', { kind: 'IndexPool', name: 'stable' }, { value: 4 })),
      await ns.post('claims', claim('new-claim', { kind: 'IndexPool', name: 'stable' }, { within: 'x' })),
      await ns.post('claims', claim('new-claim', { kind: 'IndexPool', name: 'stable' }, { reserved: ['1'] })),
      await ns.post('indices', {
        metadata: { name: 'stable-1-copy' },
        spec: { poolRef: { kind: 'IndexPool', name: 'stable' }, index: 1 },
      }),
      await ns.post('indices', {
        metadata: { name: 'stable-pre' },
        spec: { poolRef: { kind: 'IndexPool', name: 'stable' }, index: 4 },
      }),
      await ns.put('indices/stable-pre', {
        metadata: { name: 'stable-pre' },
        spec: { poolRef: { kind: 'IndexPool', name: 'stable' }, index: 4 },
      }),
      // A name that stands for a value held already (issue 13: such names are accepted, not 422, when
      // the value they name is free): by an object of that name, and by stable-pre.
      await ns.post('indices', {
        metadata: { name: 'stable-1' },
        spec: { poolRef: { kind: 'IndexPool', name: 'stable' }, index: 2 },
      }),
      await ns.post('indices', {
        metadata: { name: 'stable-5' },
        spec: { poolRef: { kind: 'IndexPool', name: 'stable' }, index: 3 },
      }),
      await ns.post('ipaddresspools', {
        metadata: { name: 'v4' },
        spec: { prefixes: ['10.0.0.0/8', '2001:db8::/32'] },
      }),
      await ns.call('POST', 'indexpools', JSON.stringify(indexPool('big', ['1..2'])) + ' '.repeat(LIMIT), {
        'content-type': 'application/json',
      }),
    ];
    for (const answer of rejected)
      expect(answer.status, JSON.stringify(answer.body)).toBeGreaterThanOrEqual(400);

    await allot.stream!.drained();
    expect(await snapshot()).toEqual(before);
  });
});

describe('every error body', () => {
  it('is JSON with content-type application/json', async () => {
    const response = await fetch(`${allot.url}/v1/nothing`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 404,
      reason: 'NotFound',
    });
  });
});

describe('the fixed routes', () => {
  it('answers GET /v1/healthz with 200 {status: ok}', async () => {
    const answer = await api.get('/v1/healthz');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok' });
  });

  it('serves the OpenAPI 3.1 document with a path and method for every route', async () => {
    const answer = await api.get('/v1/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toBe('3.1.0');
    const paths = answer.body.paths as Record<string, Record<string, unknown>>;
    for (const route of ROUTES) {
      expect(paths[route.path], route.path).toBeDefined();
      expect(paths[route.path]![route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
    const documented = Object.entries(paths).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((key) => ['get', 'post', 'put', 'delete', 'patch'].includes(key))
        .map((method) => `${method} ${path}`),
    );
    expect(documented.sort()).toEqual(
      ROUTES.map((route) => `${route.method.toLowerCase()} ${route.path}`).sort(),
    );
  });

  it('serves every route of the table: none answers 404 or 405 for its own method', async () => {
    for (const route of ROUTES) {
      const path = route.path.replace('{namespace}', 'default').replace('{name}', 'probe');
      const body = route.method === 'POST' || route.method === 'PUT' ? {} : undefined;
      const answer = await api.call(route.method, path, body);
      expect(answer.status, `${route.method} ${path}`).not.toBe(405);
      // An item route (or one under an item, like a pool's map or preview) may answer 404 for the missing
      // "probe"; a collection route never does.
      if (!route.path.includes('{name}')) expect(answer.status, `${route.method} ${path}`).not.toBe(404);
      else if (answer.status === 404) expect(answer.body.details?.name).toBe('probe');
    }
  });

  it('keeps the apiVersion of objects distinct from the Status apiVersion', async () => {
    expect((await api.get('indexpools/existing')).body.apiVersion).toBe(API_VERSION);
    expect((await api.get('indexpools/missing')).body.apiVersion).toBe('v1');
  });
});
