/**
 * Claims over HTTP (api.md, "Claim"): next free value, specific values, `within`, waiting reasons and
 * their resolution with no further call, idempotency, release under Recycle and Retain, rebinding,
 * pre-provisioning, `owner`, and parallel claims.
 */
import { describe, expect, it } from 'vitest';
import { API_VERSION, claim, client, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

import { allocatedState, expectFailure, expectInvalid } from './support.ts';

const { allot, api } = useTestAllot();

const ALLOW_BINDING = 'pool.networking.metal.ironcore.dev/allow-binding';
const ref = (name: string) => ({ kind: 'IndexPool', name });

async function valueOf(name: string): Promise<string | undefined> {
  return (await api.get(`claims/${name}`)).body.status?.value;
}

async function claimValue(name: string, pool: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await api.post('claims', claim(name, ref(pool), extra));
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.status.value;
}

function index(name: string, pool: string, value: number, extra: Record<string, unknown> = {}) {
  const { metadata, ...spec } = extra as { metadata?: Record<string, unknown> };
  return {
    apiVersion: API_VERSION,
    kind: 'Index',
    metadata: { name, ...metadata },
    spec: { poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: pool }, index: value, ...spec },
  };
}

/** Waits until the stream has counted `allocated` objects in the pool. */
async function poolCounts(pool: string, status: Record<string, unknown>) {
  await eventually(async () =>
    expect((await api.get(`indexpools/${pool}`)).body.status).toMatchObject(status),
  );
}

describe('the next free value', () => {
  it('is handed out in spec order, ascending inside each range', async () => {
    await api.post('indexpools', indexPool('order', ['200..201', '1..2']));
    const values = [];
    for (const name of ['order-a', 'order-b', 'order-c', 'order-d'])
      values.push(await claimValue(name, 'order'));
    expect(values).toEqual(['200', '201', '1', '2']);
  });

  it('answers with status, allocationRef and the Allocated condition already set', async () => {
    await api.post('indexpools', indexPool('reply', ['64512..64520']));
    const answer = await api.post('claims', claim('reply-a', ref('reply')));
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      apiVersion: API_VERSION,
      kind: 'Claim',
      metadata: { name: 'reply-a', namespace: 'default', generation: 1 },
      spec: { poolRef: { kind: 'IndexPool', name: 'reply' } },
      status: {
        value: '64512',
        allocationRef: { apiVersion: API_VERSION, kind: 'Index', name: 'reply-64512' },
      },
    });
    expect(allocatedState(answer.body)).toBe('True/Allocated');
    expect((await api.get('claims/reply-a')).body).toEqual(answer.body);

    const allocation = await api.get('indices/reply-64512');
    expect(allocation.status).toBe(200);
    expect(allocation.body.spec).toMatchObject({
      poolRef: { kind: 'IndexPool', name: 'reply' },
      index: 64512,
      claimRef: { name: 'reply-a', uid: answer.body.metadata.uid },
    });
  });

  it('answers PoolExhausted when no candidate is left', async () => {
    await api.post('indexpools', indexPool('tiny', ['7']));
    expect(await claimValue('tiny-a', 'tiny')).toBe('7');
    const answer = await api.post('claims', claim('tiny-b', ref('tiny')));
    expect(answer.status).toBe(201);
    expect(allocatedState(answer.body)).toBe('False/PoolExhausted');
    expect(answer.body.status.value).toBeUndefined();
    expect(answer.body.status.allocationRef).toBeUndefined();
  });

  it('gives exactly the released value to the next claim once the stream has run', async () => {
    await api.post('indexpools', indexPool('release-one', ['1..3']));
    for (const name of ['rel-a', 'rel-b', 'rel-c']) await claimValue(name, 'release-one');
    await poolCounts('release-one', { allocated: 3, free: '0' });
    expect((await api.delete('claims/rel-b')).status).toBe(200);
    await eventually(async () => expectFailure(await api.get('indices/release-one-2'), 404, 'NotFound'));
    await poolCounts('release-one', { allocated: 2, free: '1' });
    expect(await claimValue('rel-d', 'release-one')).toBe('2');
  });

  it('gives a released low value before untouched higher ones', async () => {
    await api.post('indexpools', indexPool('lowest', ['1..10']));
    for (const name of ['low-a', 'low-b', 'low-c', 'low-d']) await claimValue(name, 'lowest');
    await poolCounts('lowest', { allocated: 4 });
    await api.delete('claims/low-b');
    await poolCounts('lowest', { allocated: 3 });
    expect(await claimValue('low-e', 'lowest')).toBe('2');
    expect(await claimValue('low-f', 'lowest')).toBe('5');
  });

  it('allocates a PoolExhausted claim, with no further call, once a value is released', async () => {
    await api.post('indexpools', indexPool('wake', ['1..2']));
    await claimValue('wake-a', 'wake');
    await claimValue('wake-b', 'wake');
    expect(allocatedState((await api.post('claims', claim('wake-c', ref('wake')))).body)).toBe(
      'False/PoolExhausted',
    );
    await api.delete('claims/wake-a');
    await eventually(async () => {
      const waiting = (await api.get('claims/wake-c')).body;
      expect(allocatedState(waiting)).toBe('True/Allocated');
      expect(waiting.status.value).toBe('1');
    });
  });
});

describe('a specific value', () => {
  it('is claimed when given as a JSON integer', async () => {
    await api.post('indexpools', indexPool('specific', ['1..100']));
    const answer = await api.post('claims', claim('specific-int', ref('specific'), { value: 42 }));
    expect(answer.status).toBe(201);
    expect(answer.body.status.value).toBe('42');
    expect(answer.body.status.allocationRef.name).toBe('specific-42');
  });

  it('is claimed when given as a string', async () => {
    const answer = await api.post('claims', claim('specific-str', ref('specific'), { value: '43' }));
    expect(answer.body.status.value).toBe('43');
    expect((await api.get('indices/specific-43')).body.spec.index).toBe(43);
  });

  it('is not handed out as a next free value afterwards', async () => {
    await api.post('indexpools', indexPool('specific-skip', ['1..3']));
    await claimValue('skip-a', 'specific-skip', { value: 1 });
    expect(await claimValue('skip-b', 'specific-skip')).toBe('2');
  });

  it('answers ValueTaken when another claim holds it, and is allocated once the holder is released', async () => {
    await api.post('indexpools', indexPool('taken', ['1..10']));
    await claimValue('taken-holder', 'taken', { value: 5 });
    const answer = await api.post('claims', claim('taken-wanter', ref('taken'), { value: 5 }));
    expect(answer.status).toBe(201);
    expect(allocatedState(answer.body)).toBe('False/ValueTaken');
    expect(answer.body.status.value).toBeUndefined();

    await api.delete('claims/taken-holder');
    await eventually(async () => {
      const wanter = (await api.get('claims/taken-wanter')).body;
      expect(allocatedState(wanter)).toBe('True/Allocated');
      expect(wanter.status.value).toBe('5');
    });
    expect((await api.get('indices/taken-5')).body.spec.claimRef.name).toBe('taken-wanter');
  });

  it('answers ValueTaken when a pre-provisioned object holds it', async () => {
    await api.post('indexpools', indexPool('taken-pre', ['1..10']));
    expect((await api.post('indices', index('taken-pre-4', 'taken-pre', 4))).status).toBe(201);
    expect(
      allocatedState((await api.post('claims', claim('taken-pre-a', ref('taken-pre'), { value: 4 }))).body),
    ).toBe('False/ValueTaken');
  });

  it('answers PoolExhausted for a value outside the ranges, and is allocated once the pool grows to it', async () => {
    await api.post('indexpools', indexPool('outside', ['1..10']));
    const answer = await api.post('claims', claim('outside-a', ref('outside'), { value: 50 }));
    expect(answer.status).toBe(201);
    expect(allocatedState(answer.body)).toBe('False/PoolExhausted');
    await api.put('indexpools/outside', indexPool('outside', ['1..10', '50']));
    await eventually(async () => expect(await valueOf('outside-a')).toBe('50'));
  });

  it('answers 422 for a value that is not an index', async () => {
    await api.post('indexpools', indexPool('bad-value', ['1..10']));
    expectInvalid(
      await api.post('claims', claim('bad-value-a', ref('bad-value'), { value: 'ten' })),
      'spec.value',
    );
    expectInvalid(
      await api.post('claims', claim('bad-value-b', ref('bad-value'), { value: -1 })),
      'spec.value',
    );
    expectInvalid(
      await api.post('claims', claim('bad-value-c', ref('bad-value'), { value: 1.5 })),
      'spec.value',
    );
    expectFailure(await api.get('claims/bad-value-a'), 404, 'NotFound');
  });
});

describe('within', () => {
  it('limits the value to the range "a..b"', async () => {
    await api.post('indexpools', indexPool('within', ['1..100']));
    expect(await claimValue('within-a', 'within', { within: '50..60' })).toBe('50');
    expect(await claimValue('within-b', 'within', { within: '50..60' })).toBe('51');
    expect(await claimValue('within-c', 'within')).toBe('1');
  });

  it('answers PoolExhausted when nothing within is free', async () => {
    await api.post('indexpools', indexPool('within-full', ['1..100']));
    await claimValue('within-full-a', 'within-full', { within: '7..7' });
    const answer = await api.post('claims', claim('within-full-b', ref('within-full'), { within: '7..7' }));
    expect(allocatedState(answer.body)).toBe('False/PoolExhausted');
  });

  it('answers 422 for a malformed within when the pool exists', async () => {
    await api.post('indexpools', indexPool('within-bad', ['1..100']));
    expectInvalid(
      await api.post('claims', claim('within-bad-a', ref('within-bad'), { within: '9..1' })),
      'spec.within',
    );
    expectInvalid(
      await api.post('claims', claim('within-bad-b', ref('within-bad'), { within: 7 })),
      'spec.within',
    );
  });

  it('answers 422 for a malformed within even before the pool exists', async () => {
    expectInvalid(
      await api.post('claims', claim('within-early-a', ref('within-absent'), { within: 'x' })),
      'spec.within',
    );
    expectInvalid(
      await api.post('claims', claim('within-early-b', ref('within-absent'), { within: '1..2..3' })),
      'spec.within',
    );
    expectInvalid(
      await api.post(
        'claims',
        claim('within-early-c', { kind: 'IPAddressPool', name: 'within-absent' }, { within: '10.0.0.0' }),
      ),
      'spec.within',
    );
    expectFailure(await api.get('claims/within-early-a'), 404, 'NotFound');
    // A well-formed one waits for the pool.
    const waiting = await api.post(
      'claims',
      claim('within-early-d', ref('within-absent'), { within: '5..9' }),
    );
    expect(allocatedState(waiting.body)).toBe('False/PoolNotFound');
  });

  it('answers 422 for reserved on an IndexPool claim', async () => {
    await api.post('indexpools', indexPool('reserved-index', ['1..100']));
    expectInvalid(
      await api.post('claims', claim('reserved-index-a', ref('reserved-index'), { reserved: ['1'] })),
      'spec.reserved',
    );
  });
});

describe('waiting for a pool', () => {
  it('answers PoolNotFound, then is allocated with no further call when the pool is created', async () => {
    const answer = await api.post('claims', claim('early', ref('later')));
    expect(answer.status).toBe(201);
    expect(allocatedState(answer.body)).toBe('False/PoolNotFound');
    expect(answer.body.status.value).toBeUndefined();
    await api.post('indexpools', indexPool('later', ['10..20']));
    await eventually(async () => {
      const early = (await api.get('claims/early')).body;
      expect(allocatedState(early)).toBe('True/Allocated');
      expect(early.status.value).toBe('10');
    });
  });

  it('answers PoolNotFound for a pool of the same name in another namespace', async () => {
    await api.post('indexpools', indexPool('home', ['1..10']));
    const answer = await client(allot.url, 'away').post('claims', claim('visitor', ref('home')));
    expect(answer.status).toBe(201);
    expect(allocatedState(answer.body)).toBe('False/PoolNotFound');
  });

  it('allocates every waiting claim, each its own value, when the pool appears', async () => {
    await api.post('claims', claim('queue-1', ref('queue')));
    await api.post('claims', claim('queue-2', ref('queue')));
    await api.post('indexpools', indexPool('queue', ['1..5']));
    await eventually(async () => {
      expect(await valueOf('queue-1')).toBeDefined();
      expect(await valueOf('queue-2')).toBeDefined();
    });
    const values = [await valueOf('queue-1'), await valueOf('queue-2')];
    expect(new Set(values).size).toBe(2);
    for (const value of values) expect(['1', '2', '3', '4', '5']).toContain(value);
    await poolCounts('queue', { allocated: 2, free: '3' });
  });
});

describe('an invalid poolRef', () => {
  it('is stored with 201 and PoolRefInvalid for an unknown kind', async () => {
    const answer = await api.post('claims', claim('unknown-kind', { kind: 'VlanPool', name: 'x' }));
    expect(answer.status).toBe(201);
    expect(allocatedState(answer.body)).toBe('False/PoolRefInvalid');
    expect(answer.body.status.value).toBeUndefined();
    expect(allocatedState((await api.get('claims/unknown-kind')).body)).toBe('False/PoolRefInvalid');
  });

  it('is stored with 201 and PoolRefInvalid for a wrong apiVersion', async () => {
    await api.post('indexpools', indexPool('right-pool', ['1..5']));
    const answer = await api.post(
      'claims',
      claim('wrong-version', { kind: 'IndexPool', name: 'right-pool', apiVersion: 'example.com/v1' }),
    );
    expect(answer.status).toBe(201);
    expect(allocatedState(answer.body)).toBe('False/PoolRefInvalid');
    // It never allocates: the pool's counts stay empty.
    await api.post(
      'claims',
      claim('right-version', { kind: 'IndexPool', name: 'right-pool', apiVersion: API_VERSION }),
    );
    await poolCounts('right-pool', { allocated: 1 });
    expect(allocatedState((await api.get('claims/wrong-version')).body)).toBe('False/PoolRefInvalid');
  });

  it('answers 422 when poolRef is missing or its name is malformed', async () => {
    expectInvalid(await api.post('claims', { metadata: { name: 'no-ref' }, spec: {} }), 'spec.poolRef');
    expectInvalid(
      await api.post('claims', claim('bad-ref-name', { kind: 'IndexPool', name: 'Bad#Name' })),
      'spec.poolRef.name',
    );
    expectInvalid(
      await api.post('claims', claim('bad-ref-field', { kind: 'IndexPool', name: 'p', zone: 'x' })),
      'spec.poolRef.zone',
    );
  });

  it('answers 422 for an unknown spec field', async () => {
    expectInvalid(await api.post('claims', claim('claim-typo', ref('p'), { vaule: 3 })), 'spec.vaule');
  });
});

describe('asking again', () => {
  it('answers 409 AlreadyExists to a repeated POST and keeps the value', async () => {
    await api.post('indexpools', indexPool('again', ['1..10']));
    const first = await api.post('claims', claim('again-a', ref('again')));
    const second = await api.post('claims', claim('again-a', ref('again')));
    expectFailure(second, 409, 'AlreadyExists');
    expect((await api.get('claims/again-a')).body).toEqual(first.body);
  });

  it('answers 200 with the claim unchanged to a PUT of the same spec', async () => {
    const first = (await api.get('claims/again-a')).body;
    const put = await api.put('claims/again-a', claim('again-a', ref('again')));
    expect(put.status).toBe(200);
    expect(put.body).toEqual(first);
  });

  it('treats an omitted and an explicit poolRef.apiVersion as the same spec', async () => {
    const first = (await api.get('claims/again-a')).body;
    const put = await api.put(
      'claims/again-a',
      claim('again-a', { ...ref('again'), apiVersion: API_VERSION }),
    );
    expect(put.status).toBe(200);
    expect(put.body.status.value).toBe(first.status.value);
  });

  it('creates with PUT (201), allocating before it answers', async () => {
    const put = await api.put('claims/again-put', claim('again-put', ref('again')));
    expect(put.status).toBe(201);
    expect(allocatedState(put.body)).toBe('True/Allocated');
    const again = await api.put('claims/again-put', claim('again-put', ref('again')));
    expect(again.status).toBe(200);
    expect(again.body.status.value).toBe(put.body.status.value);
  });

  it('replaces labels with PUT and keeps the value', async () => {
    const before = (await api.get('claims/again-put')).body;
    const put = await api.put('claims/again-put', {
      ...claim('again-put', ref('again')),
      metadata: { name: 'again-put', labels: { app: 'web' } },
    });
    expect(put.status).toBe(200);
    expect(put.body.metadata.labels).toEqual({ app: 'web' });
    expect(put.body.metadata.uid).toBe(before.metadata.uid);
    expect(put.body.status.value).toBe(before.status.value);
  });

  it('answers 422 when poolRef changes', async () => {
    await api.post('indexpools', indexPool('again-other', ['1..10']));
    expectInvalid(await api.put('claims/again-a', claim('again-a', ref('again-other'))), 'spec.poolRef');
    expectInvalid(
      await api.put('claims/again-a', claim('again-a', { kind: 'IPAddressPool', name: 'again' })),
      'spec.poolRef',
    );
    expect((await api.get('claims/again-a')).body.spec.poolRef.name).toBe('again');
  });

  it('answers 422 when the value of an allocated claim changes', async () => {
    expectInvalid(
      await api.put('claims/again-a', claim('again-a', ref('again'), { value: 9 })),
      'spec.value',
    );
  });

  it('answers 422 when the body name does not match the path', async () => {
    expectInvalid(await api.put('claims/again-a', claim('again-b', ref('again'))), 'metadata.name');
  });
});

describe('release', () => {
  it('answers DELETE with the last state of the claim', async () => {
    await api.post('indexpools', indexPool('last-state', ['1..10']));
    const created = await api.post('claims', claim('last-state-a', ref('last-state')));
    const deleted = await api.delete('claims/last-state-a');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(created.body);
    expectFailure(await api.get('claims/last-state-a'), 404, 'NotFound');
    expectFailure(await api.delete('claims/last-state-a'), 404, 'NotFound');
  });

  it('deletes the allocation object under Recycle', async () => {
    await api.post('indexpools', indexPool('recycle', ['1..10'], { reclaimPolicy: 'Recycle' }));
    await claimValue('recycle-a', 'recycle');
    await poolCounts('recycle', { allocated: 1 });
    await api.delete('claims/recycle-a');
    await eventually(async () => expectFailure(await api.get('indices/recycle-1'), 404, 'NotFound'));
    expect((await api.get('indices?pool=recycle')).body.items).toEqual([]);
    await poolCounts('recycle', { allocated: 0, free: '10' });
  });

  it('keeps the allocation object under Retain, with claimRef.uid "" and the name kept', async () => {
    await api.post('indexpools', indexPool('retain', ['1..10'], { reclaimPolicy: 'Retain' }));
    const held = await api.post('claims', claim('retain-a', ref('retain')));
    expect(held.body.status.value).toBe('1');
    await api.delete('claims/retain-a');
    await eventually(async () => {
      const allocation = (await api.get('indices/retain-1')).body;
      expect(allocation.spec.claimRef).toEqual({ name: 'retain-a', uid: '' });
    });
    await poolCounts('retain', { allocated: 1, free: '9' });
    // The value stays held: another claim gets the next one.
    expect(await claimValue('retain-b', 'retain')).toBe('2');
  });

  it('gives a recreated claim another value when the retained object lacks allow-binding', async () => {
    const again = await api.post('claims', claim('retain-a', ref('retain')));
    expect(again.status).toBe(201);
    expect(again.body.status.value).toBe('3');
    expect((await api.get('indices/retain-1')).body.spec.claimRef).toEqual({ name: 'retain-a', uid: '' });
  });

  it('rebinds a recreated claim to its retained object once the object has allow-binding', async () => {
    await api.post('indexpools', indexPool('rebind', ['1..10'], { reclaimPolicy: 'Retain' }));
    await claimValue('rebind-a', 'rebind');
    await api.delete('claims/rebind-a');
    await eventually(async () => expect((await api.get('indices/rebind-1')).body.spec.claimRef.uid).toBe(''));

    const annotated = await api.put(
      'indices/rebind-1',
      index('rebind-1', 'rebind', 1, {
        metadata: { annotations: { [ALLOW_BINDING]: 'true' } },
        claimRef: { name: 'rebind-a', uid: '' },
      }),
    );
    expect(annotated.status).toBe(200);
    expect(annotated.body.metadata.annotations).toEqual({ [ALLOW_BINDING]: 'true' });

    const recreated = await api.post('claims', claim('rebind-a', ref('rebind')));
    expect(recreated.status).toBe(201);
    expect(recreated.body.status.value).toBe('1');
    expect(recreated.body.status.allocationRef.name).toBe('rebind-1');
    expect((await api.get('indices/rebind-1')).body.spec.claimRef).toEqual({
      name: 'rebind-a',
      uid: recreated.body.metadata.uid,
    });
  });

  it('binds a waiting recreated claim, with no further call, when its retained object gains allow-binding', async () => {
    await api.post('indexpools', indexPool('gains', ['1'], { reclaimPolicy: 'Retain' }));
    await claimValue('gains-a', 'gains');
    await api.delete('claims/gains-a');
    await eventually(async () => expect((await api.get('indices/gains-1')).body.spec.claimRef.uid).toBe(''));
    const waiting = await api.post('claims', claim('gains-a', ref('gains')));
    expect(allocatedState(waiting.body)).toBe('False/PoolExhausted');

    await api.put(
      'indices/gains-1',
      index('gains-1', 'gains', 1, {
        metadata: { annotations: { [ALLOW_BINDING]: 'true' } },
        claimRef: { name: 'gains-a', uid: '' },
      }),
    );
    await eventually(async () => {
      const bound = (await api.get('claims/gains-a')).body;
      expect(allocatedState(bound)).toBe('True/Allocated');
      expect(bound.status.value).toBe('1');
    });
    expect((await api.get('indices/gains-1')).body.spec.claimRef.uid).toBe(waiting.body.metadata.uid);
  });
});

describe('pre-provisioning', () => {
  it('binds the seed example: Index asn-pool-65001 to claim leaf1-asn', async () => {
    const ns = client(allot.url, 'seed');
    await ns.post('indexpools', indexPool('asn-pool', ['64512..65534', '4200000000..4294967294']));
    const manifest = {
      apiVersion: API_VERSION,
      kind: 'Index',
      metadata: { name: 'asn-pool-65001', annotations: { [ALLOW_BINDING]: 'true' } },
      spec: {
        poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: 'asn-pool' },
        index: 65001,
        claimRef: { name: 'leaf1-asn' },
      },
    };
    const provisioned = await ns.post('indices', manifest);
    expect(provisioned.status).toBe(201);
    expect(provisioned.body.spec.claimRef).toEqual({ name: 'leaf1-asn', uid: '' });

    const answer = await ns.post('claims', {
      apiVersion: API_VERSION,
      kind: 'Claim',
      metadata: { name: 'leaf1-asn' },
      spec: { poolRef: { kind: 'IndexPool', name: 'asn-pool' } },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.status.value).toBe('65001');
    expect(answer.body.status.allocationRef.name).toBe('asn-pool-65001');
    expect(allocatedState(answer.body)).toBe('True/Allocated');
    expect((await ns.get('indices/asn-pool-65001')).body.spec.claimRef).toEqual({
      name: 'leaf1-asn',
      uid: answer.body.metadata.uid,
    });
    // The next claim still starts at the bottom of the pool.
    expect((await ns.post('claims', claim('leaf2-asn', ref('asn-pool')))).body.status.value).toBe('64512');
  });

  it('binds waiting claims, with no further call, when objects naming them appear', async () => {
    const leaves = [1, 2, 3, 4, 5].map((i) => ({ name: `pre-leaf${i}`, value: 60 + i }));
    for (const leaf of leaves) {
      expect(allocatedState((await api.post('claims', claim(leaf.name, ref('pre-later')))).body)).toBe(
        'False/PoolNotFound',
      );
    }
    for (const leaf of leaves) {
      const provisioned = await api.post(
        'indices',
        index(`pre-later-${leaf.value}`, 'pre-later', leaf.value, {
          metadata: { annotations: { [ALLOW_BINDING]: 'true' } },
          claimRef: { name: leaf.name },
        }),
      );
      expect(provisioned.status).toBe(201);
    }
    await api.post('indexpools', indexPool('pre-later', ['1..100']));
    await eventually(async () => {
      for (const leaf of leaves) {
        const bound = (await api.get(`claims/${leaf.name}`)).body;
        expect(allocatedState(bound), leaf.name).toBe('True/Allocated');
        expect(bound.status.value, leaf.name).toBe(String(leaf.value));
      }
    });
    await poolCounts('pre-later', { allocated: 5, free: '95' });
  });

  it('never binds an object naming another claim, and skips its value', async () => {
    await api.post('indexpools', indexPool('foreign', ['1..3']));
    await api.post(
      'indices',
      index('foreign-1', 'foreign', 1, {
        metadata: { annotations: { [ALLOW_BINDING]: 'true' } },
        claimRef: { name: 'someone-else' },
      }),
    );
    expect(await claimValue('foreign-a', 'foreign')).toBe('2');
    expect((await api.get('indices/foreign-1')).body.spec.claimRef).toEqual({
      name: 'someone-else',
      uid: '',
    });
    expect(
      allocatedState((await api.post('claims', claim('foreign-b', ref('foreign'), { value: 1 }))).body),
    ).toBe('False/ValueTaken');
  });

  it('does not bind an object naming the claim without allow-binding', async () => {
    await api.post('indexpools', indexPool('no-allow', ['1..3']));
    await api.post('indices', index('no-allow-1', 'no-allow', 1, { claimRef: { name: 'no-allow-a' } }));
    expect(await claimValue('no-allow-a', 'no-allow')).toBe('2');
  });
});

describe('owner', () => {
  it('is copied to the allocation object as spec.owner', async () => {
    await api.post('indexpools', indexPool('owned', ['1..10']));
    const owner = { kind: 'VirtualMachine', name: 'web-01/0', uid: '0b7c1b2e-0000-4000-8000-000000000001' };
    const answer = await api.post('claims', claim('owned-a', ref('owned'), { owner }));
    expect(answer.body.spec.owner).toEqual(owner);
    const allocation = await api.get(`indices/${answer.body.status.allocationRef.name}`);
    expect(allocation.body.spec.owner).toEqual(owner);
  });

  it('is copied with its apiVersion when one is given', async () => {
    const owner = { apiVersion: 'pivirt.hu/v1', kind: 'VirtualMachine', name: 'web-02/0', uid: 'vm-2' };
    const answer = await api.post('claims', claim('owned-b', ref('owned'), { owner }));
    expect(answer.status).toBe(201);
    expect(answer.body.spec.owner).toEqual(owner);
    expect((await api.get(`indices/${answer.body.status.allocationRef.name}`)).body.spec.owner).toEqual(
      owner,
    );
  });

  it('answers 422 for an owner without kind or name', async () => {
    expectInvalid(
      await api.post('claims', claim('owned-bad', ref('owned'), { owner: { uid: 'x' } })),
      'spec.owner.kind',
      'spec.owner.name',
    );
  });
});

describe('claims in parallel', () => {
  it('gives 50 parallel claims on one pool 50 distinct values, and the pool counts 50', async () => {
    await api.post('indexpools', indexPool('parallel', ['1000..1099']));
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => api.post('claims', claim(`parallel-${i}`, ref('parallel')))),
    );
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      expect(allocatedState(answer.body)).toBe('True/Allocated');
    }
    const values = answers.map((answer) => answer.body.status.value as string);
    expect(new Set(values).size).toBe(50);
    for (const value of values) expect(Number(value)).toBeGreaterThanOrEqual(1000);
    await poolCounts('parallel', { allocated: 50, free: '50' });
    const listed = (await api.get('indices?pool=parallel')).body.items;
    expect(listed).toHaveLength(50);
    const owners = new Map(listed.map((item: any) => [String(item.spec.index), item.spec.claimRef.name]));
    answers.forEach((answer) => expect(owners.get(answer.body.status.value)).toBe(answer.body.metadata.name));
  });

  it('gives parallel claims on a pool smaller than the demand each value once, the rest PoolExhausted', async () => {
    await api.post('indexpools', indexPool('scarce', ['1..10']));
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.post('claims', claim(`scarce-${i}`, ref('scarce')))),
    );
    const allocated = answers.filter((answer) => allocatedState(answer.body) === 'True/Allocated');
    const exhausted = answers.filter((answer) => allocatedState(answer.body) === 'False/PoolExhausted');
    expect(allocated).toHaveLength(10);
    expect(exhausted).toHaveLength(10);
    expect(new Set(allocated.map((answer) => answer.body.status.value)).size).toBe(10);
  });
});
