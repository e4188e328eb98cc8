/**
 * IndexPool over HTTP (api.md, "Pools", "Routes"): create, read, list, replace, delete, status, and the
 * 422/409/404/400 answers around them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, claim, client, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

import { allocatedState, availableState, expectFailure, expectInvalid } from './support.ts';

const { allot, api } = useTestAllot();

const ref = (name: string) => ({ kind: 'IndexPool', name });

describe('creating and reading an IndexPool', () => {
  it('answers 201 with server-set metadata and the status of an empty pool', async () => {
    const created = await api.post('indexpools', indexPool('create-read', ['10..19', '30']));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: API_VERSION,
      kind: 'IndexPool',
      metadata: { name: 'create-read', namespace: 'default', generation: 1, labels: {}, annotations: {} },
      spec: { ranges: ['10..19', '30'], reclaimPolicy: 'Recycle' },
      status: { allocated: 0, total: '11', free: '11' },
    });
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(availableState(created.body)).toBe('True/HasCapacity');

    const read = await api.get('indexpools/create-read');
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('accepts the seed manifest unchanged', async () => {
    const manifest = {
      apiVersion: API_VERSION,
      kind: 'IndexPool',
      metadata: { name: 'seed-asn-pool' },
      spec: { ranges: ['64512..65534', '4200000000..4294967294'] },
    };
    const created = await api.post('indexpools', manifest);
    expect(created.status).toBe(201);
    expect(created.body.status).toMatchObject({ allocated: 0, total: '94968318', free: '94968318' });
  });

  it('accepts a body without apiVersion and kind, and always answers with them', async () => {
    const created = await api.post('indexpools', {
      metadata: { name: 'no-envelope' },
      spec: { ranges: ['1..3'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: API_VERSION, kind: 'IndexPool' });
  });

  it('accepts JSON integers and single values as ranges', async () => {
    const created = await api.post('indexpools', indexPool('integers', [7, '9', '11..12']));
    expect(created.status).toBe(201);
    expect(created.body.status.total).toBe('4');
  });

  it('accepts bounds up to 2^63-2', async () => {
    const created = await api.post(
      'indexpools',
      indexPool('int63', ['9223372036854775800..9223372036854775806']),
    );
    expect(created.status).toBe(201);
    expect(created.body.status.total).toBe('7');
  });

  it('keeps labels and annotations and ignores status and server fields on input', async () => {
    const body = {
      ...indexPool('with-meta', ['1..2']),
      metadata: {
        name: 'with-meta',
        uid: 'not-mine',
        generation: 42,
        creationTimestamp: '2000-01-01T00:00:00Z',
        labels: { team: 'net' },
        annotations: { note: 'hello' },
      },
      status: { allocated: 99 },
    };
    const created = await api.post('indexpools', body);
    expect(created.status).toBe(201);
    expect(created.body.metadata).toMatchObject({
      labels: { team: 'net' },
      annotations: { note: 'hello' },
      generation: 1,
    });
    expect(created.body.metadata.uid).not.toBe('not-mine');
    expect(created.body.metadata.creationTimestamp).not.toBe('2000-01-01T00:00:00Z');
    expect(created.body.status.allocated).toBe(0);
  });

  it('answers 404 NotFound for a missing pool', async () => {
    expectFailure(await api.get('indexpools/no-such-pool'), 404, 'NotFound');
  });

  it('answers 409 AlreadyExists on POST of an existing name', async () => {
    expect((await api.post('indexpools', indexPool('twice', ['1..2']))).status).toBe(201);
    const again = await api.post('indexpools', indexPool('twice', ['5..6']));
    expectFailure(again, 409, 'AlreadyExists');
    expect((await api.get('indexpools/twice')).body.spec.ranges).toEqual(['1..2']);
  });

  it('lists an empty namespace as 200 with no items', async () => {
    const list = await client(allot.url, 'nobody-here').get('indexpools');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [], metadata: { resourceVersion: '999' } });
  });
});

describe('status of an IndexPool', () => {
  it('counts allocations and turns Available False/Exhausted when none is free', async () => {
    await api.post('indexpools', indexPool('counted', ['1..2']));
    await api.post('claims', claim('counted-a', ref('counted')));
    await eventually(async () => {
      const pool = (await api.get('indexpools/counted')).body;
      expect(pool.status).toMatchObject({ allocated: 1, total: '2', free: '1' });
      expect(availableState(pool)).toBe('True/HasCapacity');
    });
    await api.post('claims', claim('counted-b', ref('counted')));
    await eventually(async () => {
      const pool = (await api.get('indexpools/counted')).body;
      expect(pool.status).toMatchObject({ allocated: 2, total: '2', free: '0' });
      expect(availableState(pool)).toBe('False/Exhausted');
    });
    await api.delete('claims/counted-a');
    await eventually(async () => {
      const pool = (await api.get('indexpools/counted')).body;
      expect(pool.status).toMatchObject({ allocated: 1, free: '1' });
      expect(availableState(pool)).toBe('True/HasCapacity');
    });
  });
});

describe('validation of an IndexPool', () => {
  it('answers 422 for overlapping ranges with a message naming both', async () => {
    const answer = await api.post('indexpools', indexPool('overlap', ['100..200', '150..250']));
    expectInvalid(answer, 'spec.ranges[1]');
    expect(answer.body.message).toContain(
      'spec.ranges[1] (150..250) overlaps with spec.ranges[0] (100..200)',
    );
    expect(answer.body.details).toMatchObject({ kind: 'IndexPool', name: 'overlap' });
    expectFailure(await api.get('indexpools/overlap'), 404, 'NotFound');
  });

  it('treats a shared bound as an overlap', async () => {
    expectInvalid(
      await api.post('indexpools', indexPool('shared-bound', ['1..5', '5..9'])),
      'spec.ranges[1]',
    );
  });

  it('treats a single value inside a range as an overlap', async () => {
    expectInvalid(await api.post('indexpools', indexPool('single-inside', ['1..5', 3])), 'spec.ranges[1]');
  });

  it('accepts adjacent ranges', async () => {
    const answer = await api.post('indexpools', indexPool('adjacent', ['1..5', '6..9']));
    expect(answer.status).toBe(201);
    expect(answer.body.status.total).toBe('9');
  });

  it.each([
    ['a range of three parts', '1..2..3'],
    ['a negative number', '-5'],
    ['a negative JSON integer', -5],
    ['hexadecimal', '0x10'],
    ['a range that starts after it ends', '9..3'],
    ['2^63-1', '9223372036854775807'],
    ['a bound beyond 2^63-2', '1..9223372036854775807'],
    ['a number beyond int64', '99999999999999999999'],
    ['a fraction', 1.5],
    ['an empty string', ''],
    ['an open range', '5..'],
    ['a boolean', true],
    ['spaces', ' 1..2'],
  ])('answers 422 for %s as a range', async (_what, range) => {
    expectInvalid(
      await api.post('indexpools', indexPool('bad-range', ['100..200', range])),
      'spec.ranges[1]',
    );
  });

  it('answers 422 for a JSON integer beyond 2^53 (it would lose precision)', async () => {
    const body = `{"metadata":{"name":"unsafe"},"spec":{"ranges":[9007199254740993]}}`;
    expectInvalid(await api.post('indexpools', body), 'spec.ranges[0]');
  });

  it('answers 422 for missing or empty ranges', async () => {
    expectInvalid(await api.post('indexpools', indexPool('no-ranges', [])), 'spec.ranges');
    expectInvalid(await api.post('indexpools', { metadata: { name: 'no-spec' } }), 'spec');
    expectInvalid(await api.post('indexpools', { metadata: { name: 'no-ranges' }, spec: {} }), 'spec.ranges');
  });

  it('answers 422 for an unknown spec field', async () => {
    expectInvalid(
      await api.post('indexpools', indexPool('typo', ['1..2'], { rangez: ['3..4'] })),
      'spec.rangez',
    );
  });

  it('answers 422 for a wrong apiVersion', async () => {
    const body = { ...indexPool('wrong-version', ['1..2']), apiVersion: 'v1' };
    expectInvalid(await api.post('indexpools', body), 'apiVersion');
  });

  it('answers 422 for a kind that does not match the path', async () => {
    const body = { ...indexPool('wrong-kind', ['1..2']), kind: 'IPAddressPool' };
    expectInvalid(await api.post('indexpools', body), 'kind');
  });

  it.each([
    ['too long', 'a'.repeat(64)],
    ['uppercase', 'Asn-pool'],
    ['with #', 'asn#pool'],
    ['with /', 'asn/pool'],
    ['starting with -', '-asn'],
    ['ending with .', 'asn.'],
    ['empty', ''],
    ['not a string', 7],
  ])('answers 422 for a name %s', async (_what, name) => {
    expectInvalid(await api.post('indexpools', indexPool(name as string, ['1..2'])), 'metadata.name');
  });

  it('accepts a name of 63 characters with dots and dashes', async () => {
    const name = `a.b-${'c'.repeat(59)}`;
    expect(name).toHaveLength(63);
    expect((await api.post('indexpools', indexPool(name, ['1..2']))).status).toBe(201);
    expect((await api.get(`indexpools/${name}`)).status).toBe(200);
  });

  it('answers 422 when metadata.name is missing on POST', async () => {
    expectInvalid(await api.post('indexpools', { spec: { ranges: ['1..2'] } }), 'metadata.name');
  });

  it('answers 422 when metadata.namespace is not the namespace of the path', async () => {
    const body = { ...indexPool('elsewhere', ['1..2']), metadata: { name: 'elsewhere', namespace: 'other' } };
    expectInvalid(await api.post('indexpools', body), 'metadata.namespace');
  });

  it('accepts metadata.namespace equal to the namespace of the path', async () => {
    const body = { ...indexPool('here', ['1..2']), metadata: { name: 'here', namespace: 'default' } };
    expect((await api.post('indexpools', body)).status).toBe(201);
  });

  it('answers 422 for an unknown reclaimPolicy', async () => {
    expectInvalid(
      await api.post('indexpools', indexPool('bad-policy', ['1..2'], { reclaimPolicy: 'Delete' })),
      'spec.reclaimPolicy',
    );
  });

  it('answers 422 for labels that are not string maps', async () => {
    const body = { ...indexPool('bad-labels', ['1..2']), metadata: { name: 'bad-labels', labels: { n: 1 } } };
    expectInvalid(await api.post('indexpools', body), 'metadata.labels[n]');
  });

  it('names every failing field in one answer', async () => {
    const body = {
      apiVersion: 'x',
      kind: 'Claim',
      metadata: { name: 'Bad' },
      spec: { ranges: ['2..1'], extra: 1 },
    };
    expectInvalid(
      await api.post('indexpools', body),
      'apiVersion',
      'kind',
      'metadata.name',
      'spec.ranges[0]',
      'spec.extra',
    );
  });
});

describe('replacing an IndexPool with PUT', () => {
  it('creates with 201, then replaces with 200', async () => {
    const created = await api.put('indexpools/put-pool', indexPool('put-pool', ['1..10']));
    expect(created.status).toBe(201);
    expect(created.body.metadata.generation).toBe(1);
    const replaced = await api.put('indexpools/put-pool', {
      ...indexPool('put-pool', ['1..10', '20..29']),
      metadata: { name: 'put-pool', labels: { tier: 'a' } },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata).toMatchObject({
      uid: created.body.metadata.uid,
      generation: 2,
      labels: { tier: 'a' },
    });
    expect(replaced.body.metadata.creationTimestamp).toBe(created.body.metadata.creationTimestamp);
    expect(replaced.body.spec.ranges).toEqual(['1..10', '20..29']);
    expect(replaced.body.status.total).toBe('20');
    expect((await api.get('indexpools/put-pool')).body.spec.ranges).toEqual(['1..10', '20..29']);
  });

  it('takes the name from the path when the body has none', async () => {
    const created = await api.put('indexpools/put-nameless', { spec: { ranges: ['1..2'] } });
    expect(created.status).toBe(201);
    expect(created.body.metadata.name).toBe('put-nameless');
  });

  it('answers 422 when the body name does not match the path', async () => {
    expectInvalid(await api.put('indexpools/put-a', indexPool('put-b', ['1..2'])), 'metadata.name');
    expectFailure(await api.get('indexpools/put-a'), 404, 'NotFound');
    expectFailure(await api.get('indexpools/put-b'), 404, 'NotFound');
  });

  it('answers 422 for a malformed name in the path', async () => {
    expectInvalid(await api.put('indexpools/Upper', { spec: { ranges: ['1..2'] } }), 'metadata.name');
  });

  it('answers 422 when reclaimPolicy changes, and keeps the pool as it was', async () => {
    await api.post('indexpools', indexPool('immutable-policy', ['1..2']));
    const answer = await api.put(
      'indexpools/immutable-policy',
      indexPool('immutable-policy', ['1..3'], { reclaimPolicy: 'Retain' }),
    );
    expectInvalid(answer, 'spec.reclaimPolicy');
    const pool = (await api.get('indexpools/immutable-policy')).body;
    expect(pool.spec).toEqual({ ranges: ['1..2'], reclaimPolicy: 'Recycle' });
    expect(pool.metadata.generation).toBe(1);
  });

  it('answers 422 when reclaimPolicy is dropped from a Retain pool (the default is Recycle)', async () => {
    await api.post('indexpools', indexPool('retain-kept', ['1..2'], { reclaimPolicy: 'Retain' }));
    expectInvalid(
      await api.put('indexpools/retain-kept', indexPool('retain-kept', ['1..2'])),
      'spec.reclaimPolicy',
    );
  });

  it('validates the replacement like a creation', async () => {
    await api.post('indexpools', indexPool('put-checked', ['1..2']));
    expectInvalid(
      await api.put('indexpools/put-checked', indexPool('put-checked', ['1..5', '5..6'])),
      'spec.ranges[1]',
    );
    expect((await api.get('indexpools/put-checked')).body.spec.ranges).toEqual(['1..2']);
  });

  it('keeps the generation when only labels change', async () => {
    await api.post('indexpools', indexPool('labels-only', ['1..2']));
    const replaced = await api.put('indexpools/labels-only', {
      ...indexPool('labels-only', ['1..2']),
      metadata: { name: 'labels-only', labels: { a: 'b' } },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata).toMatchObject({ generation: 1, labels: { a: 'b' } });
  });

  it('allocates a PoolExhausted claim, with no further call, once a spec update adds a range', async () => {
    await api.post('indexpools', indexPool('grows', ['1']));
    expect((await api.post('claims', claim('grows-a', ref('grows')))).body.status.value).toBe('1');
    const waiting = await api.post('claims', claim('grows-b', ref('grows')));
    expect(waiting.status).toBe(201);
    expect(allocatedState(waiting.body)).toBe('False/PoolExhausted');
    expect(waiting.body.status.value).toBeUndefined();

    expect((await api.put('indexpools/grows', indexPool('grows', ['1', '5..6']))).status).toBe(200);
    await eventually(async () => {
      const claimed = (await api.get('claims/grows-b')).body;
      expect(allocatedState(claimed)).toBe('True/Allocated');
      expect(claimed.status.value).toBe('5');
      expect(claimed.status.allocationRef).toEqual({
        apiVersion: API_VERSION,
        kind: 'Index',
        name: 'grows-5',
      });
    });
  });

  it('keeps allocations of a removed range and counts them as allocated but not as held', async () => {
    await api.post('indexpools', indexPool('shrinks', ['1..2', '10..11']));
    await api.post('claims', claim('shrinks-a', ref('shrinks'), { value: 10 }));
    await eventually(async () => expect((await api.get('indexpools/shrinks')).body.status.allocated).toBe(1));
    const replaced = await api.put('indexpools/shrinks', indexPool('shrinks', ['1..2']));
    expect(replaced.status).toBe(200);
    expect((await api.get('claims/shrinks-a')).body.status.value).toBe('10');
    await eventually(async () => {
      const pool = (await api.get('indexpools/shrinks')).body;
      expect(pool.status).toMatchObject({ allocated: 1, total: '2', free: '2' });
    });
  });
});

describe('deleting an IndexPool', () => {
  it('answers 200 with the last state and then 404', async () => {
    await api.post('indexpools', indexPool('short-lived', ['1..2'], { reclaimPolicy: 'Retain' }));
    const deleted = await api.delete('indexpools/short-lived');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      kind: 'IndexPool',
      metadata: { name: 'short-lived' },
      spec: { reclaimPolicy: 'Retain' },
    });
    expectFailure(await api.get('indexpools/short-lived'), 404, 'NotFound');
    expectFailure(await api.delete('indexpools/short-lived'), 404, 'NotFound');
  });

  it('answers 409 PoolInUse when allocations remain', async () => {
    await api.post('indexpools', indexPool('in-use', ['1..5']));
    await api.post('claims', claim('in-use-a', ref('in-use')));
    const answer = await api.delete('indexpools/in-use');
    expectFailure(answer, 409, 'PoolInUse');
    expect((await api.get('indexpools/in-use')).status).toBe(200);
    expect((await api.get('claims/in-use-a')).body.status.value).toBe('1');
  });

  it('answers 409 PoolInUse for a pre-provisioned allocation object alone', async () => {
    await api.post('indexpools', indexPool('in-use-pre', ['1..5']));
    await api.post('indices', {
      apiVersion: API_VERSION,
      kind: 'Index',
      metadata: { name: 'in-use-pre-3' },
      spec: { poolRef: ref('in-use-pre'), index: 3 },
    });
    expectFailure(await api.delete('indexpools/in-use-pre'), 409, 'PoolInUse');
  });

  it('deletes the pool once its claims are released and recycled', async () => {
    await api.post('indexpools', indexPool('released', ['1..5']));
    await api.post('claims', claim('released-a', ref('released')));
    await api.delete('claims/released-a');
    await eventually(async () => expect((await api.get('indices?pool=released')).body.items).toEqual([]));
    expect((await api.delete('indexpools/released')).status).toBe(200);
  });

  it('with ?cascade=true deletes the pool, its allocation objects and the bound claims', async () => {
    await api.post('indexpools', indexPool('cascade', ['1..5']));
    await api.post('indexpools', indexPool('bystander', ['1..5']));
    await api.post('claims', claim('cascade-a', ref('cascade')));
    await api.post('claims', claim('cascade-b', ref('cascade')));
    await api.post('claims', claim('bystander-a', ref('bystander')));
    await api.post('indices', {
      metadata: { name: 'cascade-custom' },
      spec: { poolRef: ref('cascade'), index: 5 },
    });
    expect((await api.get('indices?pool=cascade')).body.items).toHaveLength(3);

    const deleted = await api.delete('indexpools/cascade?cascade=true');
    expect(deleted.status).toBe(200);
    expect(deleted.body.metadata.name).toBe('cascade');

    expectFailure(await api.get('indexpools/cascade'), 404, 'NotFound');
    expect((await api.get('indices?pool=cascade')).body.items).toEqual([]);
    expectFailure(await api.get('indices/cascade-1'), 404, 'NotFound');
    expectFailure(await api.get('indices/cascade-custom'), 404, 'NotFound');
    expectFailure(await api.get('claims/cascade-a'), 404, 'NotFound');
    expectFailure(await api.get('claims/cascade-b'), 404, 'NotFound');
    expect((await api.get('claims/bystander-a')).body.status.value).toBe('1');
    expect((await api.get('indices?pool=bystander')).body.items).toHaveLength(1);
  });

  it('lets a pool of the same name start empty after a cascade', async () => {
    await api.post('indexpools', indexPool('reborn', ['1..5']));
    await api.post('claims', claim('reborn-a', ref('reborn')));
    expect((await api.delete('indexpools/reborn?cascade=true')).status).toBe(200);
    expect((await api.post('indexpools', indexPool('reborn', ['1..5']))).status).toBe(201);
    const again = await api.post('claims', claim('reborn-a', ref('reborn')));
    expect(again.status).toBe(201);
    expect(again.body.status.value).toBe('1');
  });

  it('answers 400 for a malformed cascade flag', async () => {
    await api.post('indexpools', indexPool('flagged', ['1..2']));
    expectFailure(await api.delete('indexpools/flagged?cascade=yes'), 400, 'BadRequest');
    expect((await api.get('indexpools/flagged')).status).toBe(200);
  });
});

describe('listing IndexPools', () => {
  const names = Array.from({ length: 23 }, (_, i) => `page-${String.fromCharCode(97 + ((i * 7) % 23))}${i}`);
  const paged = () => client(allot.url, 'paging');

  beforeAll(async () => {
    for (const name of names)
      expect((await paged().post('indexpools', indexPool(name, ['1..2']))).status).toBe(201);
  });

  it('returns every item exactly once, in name order, across pages', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const answer = await paged().get(
        `indexpools?limit=5${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.body.items.length).toBeLessThanOrEqual(5);
      seen.push(...answer.body.items.map((item: { metadata: { name: string } }) => item.metadata.name));
      token = answer.body.metadata.continue;
      pages++;
    } while (token && pages < 20);
    expect(seen).toEqual([...names].sort());
    expect(pages).toBe(5);
  });

  it('returns everything on one page by default, with no continue', async () => {
    const answer = await paged().get('indexpools');
    expect(answer.body.items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual(
      [...names].sort(),
    );
    expect(answer.body.metadata.continue).toBeUndefined();
  });

  it('gives no continue token when a page ends exactly at the last item', async () => {
    const answer = await paged().get(`indexpools?limit=${names.length}`);
    expect(answer.body.items).toHaveLength(names.length);
    expect(answer.body.metadata.continue).toBeUndefined();
  });

  it('accepts limit=1000 and limit=1', async () => {
    expect((await paged().get('indexpools?limit=1000')).body.items).toHaveLength(names.length);
    const one = await paged().get('indexpools?limit=1');
    expect(one.body.items).toHaveLength(1);
    expect(typeof one.body.metadata.continue).toBe('string');
  });

  it('lists full objects with status', async () => {
    const answer = await paged().get('indexpools?limit=1');
    expect(answer.body.items[0]).toMatchObject({
      apiVersion: API_VERSION,
      kind: 'IndexPool',
      status: { total: '2' },
    });
  });

  it.each([
    ['limit=0', 'limit=0'],
    ['limit=1001', 'limit=1001'],
    ['limit=x', 'limit=x'],
    ['limit=-1', 'limit=-1'],
    ['an empty limit', 'limit='],
    ['a continue token it did not issue', 'continue=not-a-token'],
  ])('answers 400 BadRequest for %s', async (_what, query) => {
    expectFailure(await paged().get(`indexpools?${query}`), 400, 'BadRequest');
  });
});
