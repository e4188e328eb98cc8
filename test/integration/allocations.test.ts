/**
 * Allocation objects over HTTP, with Index as the example (api.md, "Allocation objects"): create, read,
 * replace, delete, names, uniqueness of values, immutable fields, the Valid condition and `?pool=`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, claim, client, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

import { allocatedState, expectFailure, expectInvalid, validState } from './support.ts';

const { allot, api } = useTestAllot();

const ref = (name: string) => ({ kind: 'IndexPool', name });

function index(name: string | undefined, pool: string, value: unknown, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: API_VERSION,
    kind: 'Index',
    metadata: name === undefined ? {} : { name },
    spec: { poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: pool }, index: value, ...extra },
  };
}

const names = (items: { metadata: { name: string } }[]) => items.map((item) => item.metadata.name);

describe('creating, reading and deleting an Index', () => {
  beforeAll(async () => {
    await api.post('indexpools', indexPool('crud', ['1..100']));
  });

  it('answers 201 to POST and 200 to GET with the same object', async () => {
    const created = await api.post('indices', index('crud-5', 'crud', 5));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: API_VERSION,
      kind: 'Index',
      metadata: { name: 'crud-5', namespace: 'default', generation: 1, labels: {}, annotations: {} },
      spec: { poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: 'crud' }, index: 5 },
    });
    expect(created.body.spec.claimRef).toBeUndefined();
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(validState(created.body)).toBe('True/ValueInRange');
    const read = await api.get('indices/crud-5');
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('accepts the index as a decimal string and writes it as an integer', async () => {
    const created = await api.post('indices', index('crud-6', 'crud', '6'));
    expect(created.status).toBe(201);
    expect(created.body.spec.index).toBe(6);
  });

  it('accepts a poolRef without apiVersion and always answers with it', async () => {
    const created = await api.post('indices', {
      metadata: { name: 'crud-7' },
      spec: { poolRef: ref('crud'), index: 7 },
    });
    expect(created.status).toBe(201);
    expect(created.body.spec.poolRef).toEqual({ apiVersion: API_VERSION, kind: 'IndexPool', name: 'crud' });
  });

  it('counts a pre-provisioned object in the pool status', async () => {
    await eventually(async () => {
      expect((await api.get('indexpools/crud')).body.status).toMatchObject({ allocated: 3, free: '97' });
    });
  });

  it('answers 200 to DELETE with the last state, then 404', async () => {
    const before = (await api.get('indices/crud-7')).body;
    const deleted = await api.delete('indices/crud-7');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(before);
    expectFailure(await api.get('indices/crud-7'), 404, 'NotFound');
    expectFailure(await api.delete('indices/crud-7'), 404, 'NotFound');
  });

  it('frees the value of a deleted object for claims', async () => {
    await api.post('indexpools', indexPool('freed', ['1..2']));
    await api.post('indices', index('freed-1', 'freed', 1));
    // Counted first, so the zero below is the stream's answer to the delete, not the empty pool's.
    await eventually(async () => expect((await api.get('indexpools/freed')).body.status.allocated).toBe(1));
    await api.delete('indices/freed-1');
    await eventually(async () => expect((await api.get('indexpools/freed')).body.status.allocated).toBe(0));
    expect((await api.post('claims', claim('freed-a', ref('freed')))).body.status.value).toBe('1');
  });

  it('answers 404 for a missing object', async () => {
    expectFailure(await api.get('indices/crud-99'), 404, 'NotFound');
    expectFailure(await api.get('indices/no-such-object'), 404, 'NotFound');
  });

  it('creates with PUT (201), then replaces labels and annotations (200)', async () => {
    const created = await api.put('indices/crud-8', index('crud-8', 'crud', 8));
    expect(created.status).toBe(201);
    const replaced = await api.put('indices/crud-8', {
      ...index('crud-8', 'crud', 8),
      metadata: { name: 'crud-8', labels: { site: 'a' }, annotations: { note: 'kept for r1' } },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata).toMatchObject({
      uid: created.body.metadata.uid,
      labels: { site: 'a' },
      annotations: { note: 'kept for r1' },
    });
    expect((await api.get('indices/crud-8')).body.metadata.labels).toEqual({ site: 'a' });
  });

  it('takes the name from the path on PUT when the body has none', async () => {
    const created = await api.put('indices/crud-9', index(undefined, 'crud', 9));
    expect(created.status).toBe(201);
    expect(created.body.metadata.name).toBe('crud-9');
  });
});

describe('names of allocation objects', () => {
  beforeAll(async () => {
    await api.post('indexpools', indexPool('named', ['1..100']));
  });

  it('are deterministic, <pool>-<index>, when the server creates them', async () => {
    const answer = await api.post('claims', claim('named-a', ref('named'), { value: 64 }));
    expect(answer.body.status.allocationRef).toEqual({
      apiVersion: API_VERSION,
      kind: 'Index',
      name: 'named-64',
    });
    const allocation = await api.get('indices/named-64');
    expect(allocation.status).toBe(200);
    expect(allocation.body.spec).toMatchObject({
      index: 64,
      claimRef: { name: 'named-a', uid: answer.body.metadata.uid },
    });
  });

  it('may be any valid name on POST, and GET finds the object by it', async () => {
    const created = await api.post('indices', index('reserved-for-r1', 'named', 10));
    expect(created.status).toBe(201);
    expect(created.body.metadata.name).toBe('reserved-for-r1');
    const read = await api.get('indices/reserved-for-r1');
    expect(read.status).toBe(200);
    expect(read.body.spec.index).toBe(10);
    expectFailure(await api.get('indices/named-10'), 404, 'NotFound');
    expect(names((await api.get('indices?pool=named')).body.items)).toContain('reserved-for-r1');
  });

  it('may be a DNS subdomain longer than 63 characters', async () => {
    const name = `${'x'.repeat(60)}.${'y'.repeat(60)}`;
    expect((await api.post('indices', index(name, 'named', 11))).status).toBe(201);
    expect((await api.get(`indices/${name}`)).body.spec.index).toBe(11);
  });

  it('holds its value under a custom name: claims skip it and a claim for it waits', async () => {
    await api.post('indexpools', indexPool('custom-held', ['1..3']));
    await api.post('indices', index('custom-one', 'custom-held', 1));
    expect((await api.post('claims', claim('custom-held-a', ref('custom-held')))).body.status.value).toBe(
      '2',
    );
    const wanting = await api.post('claims', claim('custom-held-b', ref('custom-held'), { value: 1 }));
    expect(allocatedState(wanting.body)).toBe('False/ValueTaken');
  });

  it('can be reused after a custom-named object is deleted', async () => {
    await api.post('indices', index('reusable', 'named', 12));
    expect((await api.delete('indices/reusable')).status).toBe(200);
    expectFailure(await api.get('indices/reusable'), 404, 'NotFound');
    const again = await api.post('indices', index('reusable', 'named', 13));
    expect(again.status).toBe(201);
    expect((await api.get('indices/reusable')).body.spec.index).toBe(13);
    // The value the old object held is free again.
    expect((await api.post('indices', index('named-12', 'named', 12))).status).toBe(201);
  });

  it('answers 409 AlreadyExists to a second object under a custom name in use', async () => {
    await api.post('indices', index('taken-name', 'named', 14));
    expectFailure(await api.post('indices', index('taken-name', 'named', 15)), 409, 'AlreadyExists');
    expect((await api.get('indices/taken-name')).body.spec.index).toBe(14);
    // The value the rejected object asked for stays free.
    expect((await api.post('indices', index('named-15', 'named', 15))).status).toBe(201);
  });

  it('answers 409 AlreadyExists to a repeated POST of the deterministic name', async () => {
    await api.post('indices', index('named-16', 'named', 16));
    expectFailure(await api.post('indices', index('named-16', 'named', 16)), 409, 'AlreadyExists');
  });

  // The contract changed (issue 13): such names were refused with 422; now the name is the arbiter.
  it('accepts the deterministic name of another value of its pool, and holds that value', async () => {
    const created = await api.post('indices', index('named-18', 'named', 17));
    expect(created.status).toBe(201);
    expect((await api.get('indices/named-18')).body.spec.index).toBe(17);
    // Both values are held: 17 by the object, 18 by its name.
    const for18 = await api.post('claims', claim('named-b', ref('named'), { value: 18 }));
    expect(allocatedState(for18.body)).toBe('False/ValueTaken');
    expectFailure(await api.post('indices', index('named-17', 'named', 17)), 409, 'AlreadyExists');
  });

  it('accepts the deterministic name of a value of another pool (test/integration/held-names.test.ts)', async () => {
    const created = await api.post('indices', index('other-pool-19', 'named', 19));
    expect(created.status).toBe(201);
    expect((await api.get('indices/other-pool-19')).body.spec).toMatchObject({
      poolRef: { name: 'named' },
      index: 19,
    });
  });

  it('accepts a name ending in digits that is not a canonical index (named-007)', async () => {
    expect((await api.post('indices', index('named-007', 'named', 21))).status).toBe(201);
    expect((await api.get('indices/named-007')).body.spec.index).toBe(21);
  });

  it.each([
    ['uppercase', 'Named-20'],
    ['with #', 'named#20'],
    ['too long', 'a'.repeat(254)],
  ])('answers 422 for a name %s', async (_what, name) => {
    expectInvalid(await api.post('indices', index(name, 'named', 20)), 'metadata.name');
  });
});

describe('one value, one object', () => {
  beforeAll(async () => {
    await api.post('indexpools', indexPool('unique', ['1..100']));
  });

  it('answers 409 AlreadyExists to a second object for the same value', async () => {
    expect((await api.post('indices', index('unique-1', 'unique', 1))).status).toBe(201);
    const answer = await api.post('indices', index('second-for-one', 'unique', 1));
    expectFailure(answer, 409, 'AlreadyExists');
    expectFailure(await api.get('indices/second-for-one'), 404, 'NotFound');
    // The rejected name was not kept: it is free for another value.
    expect((await api.post('indices', index('second-for-one', 'unique', 2))).status).toBe(201);
  });

  it('answers 409 AlreadyExists to an object for a value a claim holds', async () => {
    const held = await api.post('claims', claim('unique-a', ref('unique'), { value: 3 }));
    expect(held.body.status.value).toBe('3');
    expectFailure(await api.post('indices', index('mine-three', 'unique', 3)), 409, 'AlreadyExists');
    expectFailure(
      await api.put('indices/mine-three', index('mine-three', 'unique', 3)),
      409,
      'AlreadyExists',
    );
    expect((await api.get('indices/unique-3')).body.spec.claimRef.name).toBe('unique-a');
  });

  it('allows the same value in another pool', async () => {
    await api.post('indexpools', indexPool('unique-other', ['1..100']));
    expect((await api.post('indices', index('unique-other-1', 'unique-other', 1))).status).toBe(201);
  });
});

describe('immutable fields', () => {
  beforeAll(async () => {
    await api.post('indexpools', indexPool('fixed', ['1..100']));
    await api.post('indexpools', indexPool('fixed-other', ['1..100']));
    await api.post('indices', index('fixed-1', 'fixed', 1));
    await api.post('indices', index('fixed-custom', 'fixed', 2));
  });

  it('answers 422 when poolRef changes on PUT', async () => {
    expectInvalid(
      await api.put('indices/fixed-custom', index('fixed-custom', 'fixed-other', 2)),
      'spec.poolRef',
    );
    expect((await api.get('indices/fixed-custom')).body.spec.poolRef.name).toBe('fixed');
  });

  it('answers 422 when the value changes on PUT', async () => {
    expectInvalid(await api.put('indices/fixed-custom', index('fixed-custom', 'fixed', 3)), 'spec.index');
    expect((await api.get('indices/fixed-custom')).body.spec.index).toBe(2);
  });

  it('answers 422 when the value of a deterministically named object changes on PUT', async () => {
    const answer = await api.put('indices/fixed-1', index('fixed-1', 'fixed', 4));
    expectFailure(answer, 422, 'Invalid');
    expect((await api.get('indices/fixed-1')).body.spec.index).toBe(1);
    expectFailure(await api.get('indices/fixed-4'), 404, 'NotFound');
  });

  it('answers 422 when claimRef of a bound object is moved to another claim', async () => {
    const held = await api.post('claims', claim('fixed-a', ref('fixed'), { value: 50 }));
    const answer = await api.put(
      'indices/fixed-50',
      index('fixed-50', 'fixed', 50, { claimRef: { name: 'fixed-b', uid: '' } }),
    );
    expectInvalid(answer, 'spec.claimRef');
    expect((await api.get('indices/fixed-50')).body.spec.claimRef).toEqual({
      name: 'fixed-a',
      uid: held.body.metadata.uid,
    });
  });

  it('keeps the bound uid when a PUT of a bound object sends claimRef.uid ""', async () => {
    const held = (await api.get('claims/fixed-a')).body;
    const answer = await api.put(
      'indices/fixed-50',
      index('fixed-50', 'fixed', 50, { claimRef: { name: 'fixed-a', uid: '' }, metadata: undefined }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.spec.claimRef).toEqual({ name: 'fixed-a', uid: held.metadata.uid });
  });
});

describe('the Valid condition', () => {
  it('is True/ValueInRange for a value of the pool', async () => {
    await api.post('indexpools', indexPool('valid', ['1..10', '20..30']));
    expect(validState((await api.post('indices', index('valid-25', 'valid', 25))).body)).toBe(
      'True/ValueInRange',
    );
  });

  it('is False/ValueOutOfRange for a pre-provisioned value outside the ranges', async () => {
    expect(validState((await api.post('indices', index('valid-15', 'valid', 15))).body)).toBe(
      'False/ValueOutOfRange',
    );
  });

  it('turns False/ValueOutOfRange after the pool ranges shrink, and the value is kept', async () => {
    await api.post('indexpools', indexPool('shrink', ['1..10', '20..30']));
    const held = await api.post('claims', claim('shrink-a', ref('shrink'), { value: 22 }));
    expect(validState((await api.get('indices/shrink-22')).body)).toBe('True/ValueInRange');

    expect((await api.put('indexpools/shrink', indexPool('shrink', ['1..10']))).status).toBe(200);
    const allocation = (await api.get('indices/shrink-22')).body;
    expect(validState(allocation)).toBe('False/ValueOutOfRange');
    expect(allocation.spec).toMatchObject({
      index: 22,
      claimRef: { name: 'shrink-a', uid: held.body.metadata.uid },
    });
    const listed = (await api.get('indices?pool=shrink')).body.items;
    expect(validState(listed[0])).toBe('False/ValueOutOfRange');
    expect((await api.get('claims/shrink-a')).body.status.value).toBe('22');

    await api.put('indexpools/shrink', indexPool('shrink', ['1..10', '20..30']));
    expect(validState((await api.get('indices/shrink-22')).body)).toBe('True/ValueInRange');
  });

  it('is False/PoolNotFound when the pool does not exist, and True once it does', async () => {
    const created = await api.post('indices', index('nowhere-3', 'nowhere', 3));
    expect(created.status).toBe(201);
    expect(validState(created.body)).toBe('False/PoolNotFound');
    expect(validState((await api.get('indices/nowhere-3')).body)).toBe('False/PoolNotFound');
    await api.post('indexpools', indexPool('nowhere', ['1..5']));
    expect(validState((await api.get('indices/nowhere-3')).body)).toBe('True/ValueInRange');
    await eventually(async () => expect((await api.get('indexpools/nowhere')).body.status.allocated).toBe(1));
  });
});

describe('validation of an Index', () => {
  it.each([
    ['a missing poolRef', { metadata: { name: 'v-1' }, spec: { index: 1 } }, 'spec.poolRef'],
    [
      'a poolRef of another kind',
      index('v-2', 'p', 2, { poolRef: { kind: 'IPAddressPool', name: 'p' } }),
      'spec.poolRef.kind',
    ],
    [
      'a poolRef of another apiVersion',
      index('v-3', 'p', 3, { poolRef: { kind: 'IndexPool', name: 'p', apiVersion: 'v1' } }),
      'spec.poolRef.apiVersion',
    ],
    ['a missing index', { metadata: { name: 'v-4' }, spec: { poolRef: ref('p') } }, 'spec.index'],
    ['an index that is not a number', index('v-5', 'p', 'five'), 'spec.index'],
    ['a negative index', index('v-6', 'p', -6), 'spec.index'],
    ['an index beyond 2^63-2', index('v-7', 'p', '9223372036854775807'), 'spec.index'],
    ['an unknown spec field', index('v-8', 'p', 8, { address: '10.0.0.1' }), 'spec.address'],
    [
      'a claimRef with a bad name',
      index('v-9', 'p', 9, { claimRef: { name: 'Bad_Name' } }),
      'spec.claimRef.name',
    ],
    ['a claimRef that is not an object', index('v-10', 'p', 10, { claimRef: 'r1' }), 'spec.claimRef'],
    ['a wrong kind', { ...index('v-11', 'p', 11), kind: 'IPAddress' }, 'kind'],
    ['a missing spec', { metadata: { name: 'v-12' } }, 'spec'],
  ])('answers 422 for %s', async (_what, body, field) => {
    expectInvalid(await api.post('indices', body), field);
  });
});

describe('a bound allocation object deleted by a user', () => {
  it('makes its claim allocate again, with no further call', async () => {
    await api.post('indexpools', indexPool('lost', ['1..10']));
    const held = await api.post('claims', claim('lost-a', ref('lost')));
    expect(held.body.status.value).toBe('1');
    expect((await api.delete('indices/lost-1')).status).toBe(200);
    await eventually(async () => {
      const current = (await api.get('claims/lost-a')).body;
      expect(allocatedState(current)).toBe('True/Allocated');
      const allocation = await api.get(`indices/${current.status.allocationRef.name}`);
      expect(allocation.status).toBe(200);
      expect(allocation.body.spec.claimRef).toEqual({ name: 'lost-a', uid: held.body.metadata.uid });
    });
  });
});

describe('listing allocation objects', () => {
  const ns = () => client(allot.url, 'listing');

  beforeAll(async () => {
    await ns().post('indexpools', indexPool('la', ['1..100']));
    await ns().post('indexpools', indexPool('lb', ['1..100']));
    for (let i = 1; i <= 12; i++) await ns().post('claims', claim(`la-${i}`, ref('la')));
    for (let i = 1; i <= 5; i++) await ns().post('claims', claim(`lb-${i}`, ref('lb')));
    await ns().post('indices', index('custom-in-la', 'la', 50));
  });

  it('filters by pool with ?pool=', async () => {
    const la = (await ns().get('indices?pool=la')).body.items;
    expect(la).toHaveLength(13);
    for (const item of la) expect(item.spec.poolRef.name).toBe('la');
    const lb = (await ns().get('indices?pool=lb')).body.items;
    expect(names(lb)).toEqual(['lb-1', 'lb-2', 'lb-3', 'lb-4', 'lb-5']);
  });

  it('does not mix pools whose names share a prefix', async () => {
    await ns().post('indexpools', indexPool('l', ['1..10']));
    await ns().post('indices', index('l-1', 'l', 1));
    expect(names((await ns().get('indices?pool=l')).body.items)).toEqual(['l-1']);
  });

  it('lists an unknown pool as empty', async () => {
    expect((await ns().get('indices?pool=nothing')).body).toEqual({
      items: [],
      metadata: { resourceVersion: expect.stringMatching(/^\d+$/) },
    });
  });

  it('lists every object of the namespace without a filter', async () => {
    expect((await ns().get('indices')).body.items.length).toBeGreaterThanOrEqual(18);
  });

  it('pages through ?pool= with every object exactly once', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const answer = await ns().get(
        `indices?pool=la&limit=4${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
      );
      expect(answer.status).toBe(200);
      seen.push(...names(answer.body.items));
      token = answer.body.metadata.continue;
      pages++;
    } while (token && pages < 20);
    expect(seen).toHaveLength(13);
    expect(new Set(seen).size).toBe(13);
    expect(pages).toBe(4);
  });

  it('pages through the whole namespace with every object exactly once', async () => {
    const all = names((await ns().get('indices?limit=1000')).body.items);
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const answer = await ns().get(
        `indices?limit=3${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
      );
      seen.push(...names(answer.body.items));
      token = answer.body.metadata.continue;
      pages++;
    } while (token && pages < 50);
    expect(seen).toEqual(all);
  });

  it('answers 400 for a malformed pool filter or limit', async () => {
    expectFailure(await ns().get('indices?pool=Not%20A%20Name'), 400, 'BadRequest');
    expectFailure(await ns().get('indices?limit=0'), 400, 'BadRequest');
    expectFailure(await ns().get('indices?continue=%%%'), 400, 'BadRequest');
  });
});
