/**
 * Pools shared with other namespaces (api.md, "Pools shared with other namespaces"; docs/sharing.md): an
 * operator's pool in `infra` serves claims of tenant namespaces that name it with `poolRef.namespace`.
 * The allocation object lives in the pool's namespace; a pool not shared with a namespace is, to it, a
 * pool that does not exist; `maxAllocations` holds under any race, and a claim past it waits
 * `QuotaExceeded` until a value of its namespace is released or the limit rises.
 */
import { describe, expect, it, vi } from 'vitest';
import { objectKey } from '../../lib/store/keys.ts';
import { API_VERSION, claim, client, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import { conditionOf, expectInvalid } from './support.ts';
import { newHolderToken } from '../../lib/domain/objects/sharing.ts';
import { sweepNamespace } from '../../lib/service/repair/sweep.ts';

const { allot } = useTestAllot();
const ns = (namespace: string) => client(() => allot.url, namespace);
const infra = ns('infra');
const acme = ns('acme');
const globex = ns('globex');

const drained = () => allot.stream!.drained();
const shared = (name: string, namespace = 'infra') => ({ kind: 'IndexPool', name, namespace });
const reasonOf = (body: Record<string, any>) => conditionOf(body, 'Allocated')?.reason;

async function sharedPool(name: string, ranges: string[], sharedWith: unknown[], extra = {}) {
  const answer = await infra.put(`indexpools/${name}`, indexPool(name, ranges, { sharedWith, ...extra }));
  expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
  return answer.body;
}

describe('a pool shared with other namespaces', () => {
  it('refuses a malformed sharedWith, and poolRef.namespace that is not a name', async () => {
    const refused: [unknown, string][] = [
      ['acme', 'spec.sharedWith'],
      [[{}], 'spec.sharedWith[0].namespace'],
      [[{ namespace: 'Not A Name' }], 'spec.sharedWith[0].namespace'],
      [[{ namespace: 'acme', maxAllocations: -1 }], 'spec.sharedWith[0].maxAllocations'],
      [[{ namespace: 'acme', maxAllocations: 4001 }], 'spec.sharedWith[0].maxAllocations'],
      [[{ namespace: 'acme', maxAllocations: 1.5 }], 'spec.sharedWith[0].maxAllocations'],
      [[{ namespace: 'acme' }, { namespace: 'acme' }], 'spec.sharedWith[1].namespace'],
      [[{ namespace: 'acme', extra: 1 }], 'spec.sharedWith[0].extra'],
    ];
    for (const [sharedWith, field] of refused) {
      const answer = await infra.post('indexpools', indexPool('bad-share', ['1..3'], { sharedWith }));
      expectInvalid(answer, field);
    }
    expect((await infra.get('indexpools/bad-share')).status).toBe(404);
    const answer = await acme.post(
      'claims',
      claim('bad-ref', { kind: 'IndexPool', name: 'p', namespace: 'X!' }),
    );
    expectInvalid(answer, 'spec.poolRef.namespace');
  });

  it('allocates a tenant claim from the operator pool: the object in the pool namespace, refs carry namespaces', async () => {
    await sharedPool('fip', ['100..199'], [{ namespace: 'acme' }]);
    const made = await acme.post('claims', claim('web', shared('fip')));
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.status.value).toBe('100');
    expect(made.body.spec.poolRef).toMatchObject({ namespace: 'infra', name: 'fip' });
    expect(made.body.status.allocationRef).toEqual({
      apiVersion: API_VERSION,
      kind: 'Index',
      name: 'fip-100',
      namespace: 'infra',
    });
    const object = await infra.get('indices/fip-100');
    expect(object.status).toBe(200);
    expect(object.body.spec.claimRef).toEqual({
      name: 'web',
      uid: made.body.metadata.uid,
      namespace: 'acme',
    });
    // Nothing of it is in the tenant's namespace but its claim.
    expect((await acme.get('indices')).body.items).toEqual([]);
    // Asking again binds idempotently.
    expect((await acme.put('claims/web', claim('web', shared('fip')))).body.status.value).toBe('100');
  });

  it('is, to a namespace it is not shared with, a pool that does not exist; allocated once shared', async () => {
    await sharedPool('private', ['1..9'], []);
    const missing = await globex.post('claims', claim('ghost', shared('nowhere')));
    const unshared = await globex.post('claims', claim('c1', shared('private')));
    expect(reasonOf(unshared.body)).toBe('PoolNotFound');
    // The same message as a pool that does not exist, but for its name.
    expect(conditionOf(unshared.body, 'Allocated')?.message).toBe(
      conditionOf(missing.body, 'Allocated')?.message.replace('nowhere', 'private'),
    );
    await sharedPool('private', ['1..9'], [{ namespace: '*' }]);
    await eventually(async () => expect((await globex.get('claims/c1')).body.status.value).toBe('1'));
  });

  it('lets a named entry win over "*", and a namespace not named falls under "*"', async () => {
    await sharedPool(
      'star',
      ['1..50'],
      [
        { namespace: '*', maxAllocations: 1 },
        { namespace: 'acme', maxAllocations: 2 },
      ],
    );
    const a1 = await acme.post('claims', claim('s1', shared('star')));
    const a2 = await acme.post('claims', claim('s2', shared('star')));
    const a3 = await acme.post('claims', claim('s3', shared('star')));
    expect([a1, a2, a3].map((a) => reasonOf(a.body))).toEqual(['Allocated', 'Allocated', 'QuotaExceeded']);
    const g1 = await globex.post('claims', claim('s1', shared('star')));
    const g2 = await globex.post('claims', claim('s2', shared('star')));
    expect([g1, g2].map((a) => reasonOf(a.body))).toEqual(['Allocated', 'QuotaExceeded']);
    expect(conditionOf(g2.body, 'Allocated')?.message).toMatch(/maxAllocations/);
  });

  it('never lets 32 racing claims of one namespace hold more than maxAllocations', async () => {
    await sharedPool('race', ['1..1000'], [{ namespace: 'acme', maxAllocations: 5 }]);
    const answers = await Promise.all(
      Array.from({ length: 32 }, (_, i) => acme.post('claims', claim(`r${i}`, shared('race')))),
    );
    const allocated = answers.filter((a) => reasonOf(a.body) === 'Allocated');
    expect(allocated).toHaveLength(5);
    expect(answers.filter((a) => reasonOf(a.body) === 'QuotaExceeded')).toHaveLength(27);
    expect(new Set(allocated.map((a) => a.body.status.value)).size).toBe(5);
    await drained();
    const objects = (await infra.get('indices?pool=race')).body.items;
    expect(objects).toHaveLength(5);
    const sharing = (await infra.get('indexpools/race')).body.status.sharing;
    expect(sharing).toEqual([{ namespace: 'acme', allocated: 5, maxAllocations: 5 }]);
  });

  it('wakes a QuotaExceeded claim when one of its namespace values is released (Recycle and Retain)', async () => {
    for (const reclaimPolicy of ['Recycle', 'Retain']) {
      const pool = `wake-${reclaimPolicy.toLowerCase()}`;
      await sharedPool(pool, ['1..100'], [{ namespace: 'acme', maxAllocations: 1 }], { reclaimPolicy });
      expect(reasonOf((await acme.post('claims', claim(`${pool}-a`, shared(pool)))).body)).toBe('Allocated');
      const waiting = await acme.post('claims', claim(`${pool}-b`, shared(pool)));
      expect(reasonOf(waiting.body)).toBe('QuotaExceeded');
      expect((await acme.delete(`claims/${pool}-a`)).status).toBe(200);
      await eventually(async () =>
        expect(reasonOf((await acme.get(`claims/${pool}-b`)).body)).toBe('Allocated'),
      );
    }
  });

  it('wakes a QuotaExceeded claim when the limit rises; a lowered limit takes nothing back', async () => {
    await sharedPool('limit', ['1..100'], [{ namespace: 'acme', maxAllocations: 2 }]);
    for (const name of ['l1', 'l2', 'l3']) await acme.post('claims', claim(name, shared('limit')));
    expect(reasonOf((await acme.get('claims/l3')).body)).toBe('QuotaExceeded');
    await sharedPool('limit', ['1..100'], [{ namespace: 'acme', maxAllocations: 3 }]);
    await eventually(async () => expect(reasonOf((await acme.get('claims/l3')).body)).toBe('Allocated'));
    await sharedPool('limit', ['1..100'], [{ namespace: 'acme', maxAllocations: 1 }]);
    await drained();
    for (const name of ['l1', 'l2', 'l3'])
      expect(reasonOf((await acme.get(`claims/${name}`)).body)).toBe('Allocated');
    // Two released: still at the lowered limit, so the next one waits.
    await acme.delete('claims/l1');
    await acme.delete('claims/l2');
    await drained();
    expect(reasonOf((await acme.post('claims', claim('l4', shared('limit')))).body)).toBe('QuotaExceeded');
    await acme.delete('claims/l3');
    await eventually(async () => expect(reasonOf((await acme.get('claims/l4')).body)).toBe('Allocated'));
  });

  it('names no claim of another namespace to a tenant, and shows every holder to the owner', async () => {
    await sharedPool('names', ['1..10'], [{ namespace: '*' }]);
    await acme.post('claims', claim('secret-acme-claim', shared('names'), { value: '5' }));
    const taken = await globex.post('claims', claim('wants-5', shared('names'), { value: '5' }));
    expect(reasonOf(taken.body)).toBe('ValueTaken');
    expect(JSON.stringify(taken.body)).not.toContain('secret-acme-claim');
    expect(JSON.stringify(taken.body)).not.toContain('acme');
    const object = (await infra.get('indices/names-5')).body;
    expect(object.spec.claimRef).toMatchObject({ name: 'secret-acme-claim', namespace: 'acme' });
  });

  it('keeps the values of a namespace removed from sharedWith; its new claims wait PoolNotFound', async () => {
    await sharedPool('revoke', ['1..10'], [{ namespace: 'acme' }]);
    expect((await acme.post('claims', claim('kept', shared('revoke')))).body.status.value).toBe('1');
    await sharedPool('revoke', ['1..10'], []);
    await drained();
    expect((await acme.get('claims/kept')).body.status.value).toBe('1');
    expect(reasonOf((await acme.post('claims', claim('late', shared('revoke')))).body)).toBe('PoolNotFound');
  });

  it('cascade-deletes a shared pool without touching the tenant namespace: its claims wait PoolNotFound', async () => {
    await sharedPool('doomed', ['1..10'], [{ namespace: 'acme', maxAllocations: 3 }]);
    await acme.post('claims', claim('d1', shared('doomed')));
    expect((await infra.delete('indexpools/doomed')).status).toBe(409);
    expect((await infra.call('DELETE', '/v1/namespaces/infra/indexpools/doomed?cascade=true')).status).toBe(
      200,
    );
    await eventually(async () => {
      const left = (await acme.get('claims/d1')).body;
      expect(left.status.value).toBeUndefined();
      expect(reasonOf(left)).toBe('PoolNotFound');
    });
    // Its place was given back: the pool made again serves the namespace up to its limit.
    await sharedPool('doomed', ['1..10'], [{ namespace: 'acme', maxAllocations: 1 }]);
    await eventually(async () => expect(reasonOf((await acme.get('claims/d1')).body)).toBe('Allocated'));
  });

  it('reports each namespace usage in status.sharing', async () => {
    await sharedPool('usage', ['1..100'], [{ namespace: 'acme', maxAllocations: 4 }, { namespace: '*' }]);
    await acme.post('claims', claim('u1', shared('usage')));
    await acme.post('claims', claim('u2', shared('usage')));
    await globex.post('claims', claim('u1', shared('usage')));
    await drained();
    const sharing = (await infra.get('indexpools/usage')).body.status.sharing;
    expect(sharing).toEqual([
      { namespace: 'acme', allocated: 2, maxAllocations: 4 },
      { namespace: 'globex', allocated: 1 },
    ]);
  });

  it('gives back, in one repair sweep, a place whose attempt died before its object; a young one stays', async () => {
    await sharedPool('crash', ['1..10'], [{ namespace: 'acme', maxAllocations: 2 }]);
    const pool = { namespace: 'infra', kind: 'IndexPool' as const, name: 'crash' };
    // Two attempts that took their place and died: one long ago, one a moment ago.
    const old = newHolderToken('died-long-ago', Date.now() - 10 * 60_000);
    const young = newHolderToken('died-just-now');
    expect(await allot.table.quotas.take(pool, 'acme', old, 2)).toBe(true);
    expect(await allot.table.quotas.take(pool, 'acme', young, 2)).toBe(true);
    const waiting = await acme.post('claims', claim('after-crash', shared('crash')));
    expect(reasonOf(waiting.body)).toBe('QuotaExceeded');
    const report = await sweepNamespace({ table: allot.table }, 'infra', { recheckMs: 0 });
    expect(report.fixed.lostHolder).toBe(1);
    await eventually(async () =>
      expect(reasonOf((await acme.get('claims/after-crash')).body)).toBe('Allocated'),
    );
    const sharing = (await infra.get('indexpools/crash')).body.status.sharing;
    expect(sharing).toEqual([{ namespace: 'acme', allocated: 2, maxAllocations: 2 }]);
    // A second sweep finds nothing more: the young place is within its grace, the claim's is held.
    expect((await sweepNamespace({ table: allot.table }, 'infra', { recheckMs: 0 })).found.lostHolder).toBe(
      0,
    );
  });

  it('lists, to a tenant, the pools shared with it with its own usage and limit, and nothing of others', async () => {
    await sharedPool(
      'listed',
      ['1..20'],
      [{ namespace: 'acme', maxAllocations: 3 }, { namespace: 'globex' }],
    );
    await sharedPool('everyone', ['1..5'], [{ namespace: '*' }]);
    await sharedPool('unlisted', ['1..5'], [{ namespace: 'globex' }]);
    await acme.post('claims', claim('listed-1', shared('listed')));
    await globex.post('claims', claim('listed-g', shared('listed')));
    const answer = await acme.get('sharedpools');
    expect(answer.status).toBe(200);
    expect(answer.body.kind).toBe('SharedPoolList');
    const byName = Object.fromEntries(
      answer.body.items.map((item: Record<string, any>) => [item.metadata.name, item]),
    );
    expect(byName.listed.status.share).toEqual({ namespace: 'acme', allocated: 1, maxAllocations: 3 });
    expect(byName.listed.metadata.namespace).toBe('infra');
    expect(byName.everyone.status.share).toEqual({ namespace: 'acme', allocated: 0 });
    expect(byName.unlisted).toBeUndefined();
    // No other namespace is named: neither its entry in sharedWith nor its holdings.
    expect(JSON.stringify(answer.body)).not.toContain('globex');
    // Unshared since: gone from the list.
    await sharedPool('listed', ['1..20'], [{ namespace: 'globex' }]);
    const after = (await acme.get('sharedpools')).body.items.map(
      (item: Record<string, any>) => item.metadata.name,
    );
    expect(after).not.toContain('listed');
    expect(after).toContain('everyone');
  });

  it('places tenants’ prefixes of a shared pool of a range of lengths among the pool’s objects', async () => {
    const answer = await infra.put('ipprefixpools/nets', {
      apiVersion: API_VERSION,
      kind: 'IPPrefixPool',
      metadata: { name: 'nets' },
      spec: {
        prefixes: ['10.20.0.0/16'],
        allocationPrefixLengths: { min: 20, max: 28, default: 24 },
        sharedWith: [{ namespace: '*', maxAllocations: 2 }],
      },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const ref = { kind: 'IPPrefixPool', name: 'nets', namespace: 'infra' };
    const mine = await acme.post('claims', claim('net-a', ref, { prefixLength: 22 }));
    const theirs = await globex.post('claims', claim('net-g', ref, { prefixLength: 22 }));
    expect([mine, theirs].map((a) => reasonOf(a.body))).toEqual(['Allocated', 'Allocated']);
    expect(mine.body.status.value).not.toBe(theirs.body.status.value);
    const same = await globex.post('claims', claim('net-same', ref, { value: mine.body.status.value }));
    expect(reasonOf(same.body)).toBe('ValueTaken');
    expect(JSON.stringify(same.body)).not.toContain('net-a');
    const objects = (await infra.get('ipprefixes?pool=nets')).body.items;
    expect(objects.map((o: Record<string, any>) => o.spec.claimRef.namespace).sort()).toEqual([
      'acme',
      'globex',
    ]);
    // net-same's attempts (its handler's, then the stream function's on its Waiting record) each hold a
    // place for a moment: a claim refused meanwhile is woken when the place is given back.
    await globex.post('claims', claim('net-g2', ref, { prefixLength: 24 }));
    await globex.post('claims', claim('net-g3', ref, { prefixLength: 24 }));
    await eventually(async () => {
      const reasons = await Promise.all(
        ['net-g2', 'net-g3'].map(async (name) => reasonOf((await globex.get(`claims/${name}`)).body)),
      );
      expect(reasons.sort()).toEqual(['Allocated', 'QuotaExceeded']);
    });
  });

  it('rebinds a retained object only to a claim of that name in that namespace (allow-binding)', async () => {
    await sharedPool('kept', ['1..10'], [{ namespace: '*' }], { reclaimPolicy: 'Retain' });
    expect((await acme.post('claims', claim('same', shared('kept')))).body.status.value).toBe('1');
    await acme.delete('claims/same');
    await drained();
    const object = (await infra.get('indices/kept-1')).body;
    expect(object.spec.claimRef).toEqual({ name: 'same', uid: '', namespace: 'acme' });
    const annotated = await infra.put('indices/kept-1', {
      ...object,
      metadata: {
        ...object.metadata,
        annotations: { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' },
      },
    });
    expect(annotated.status, JSON.stringify(annotated.body)).toBe(200);
    // A claim of the same name in another namespace does not get it; acme's does.
    expect((await globex.post('claims', claim('same', shared('kept')))).body.status.value).toBe('2');
    await eventually(async () => {
      const again = await acme.put('claims/same', claim('same', shared('kept')));
      expect(again.body.status.value).toBe('1');
    });
  });

  it('binds an object the operator pre-provisioned for a tenant claim, within its quota', async () => {
    await sharedPool('pre', ['1..10'], [{ namespace: 'acme', maxAllocations: 1 }]);
    const object = {
      apiVersion: API_VERSION,
      kind: 'Index',
      metadata: {
        name: 'pre-7',
        annotations: { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' },
      },
      spec: {
        poolRef: { kind: 'IndexPool', name: 'pre' },
        index: 7,
        claimRef: { name: 'wants-7', namespace: 'acme' },
      },
    };
    expect((await infra.post('indices', object)).status).toBe(201);
    expect((await infra.get('indices/pre-7')).body.spec.claimRef).toEqual({
      name: 'wants-7',
      uid: '',
      namespace: 'acme',
    });
    await acme.post('claims', claim('first', shared('pre')));
    // The quota is used up: the offered object waits with the claim, and is bound once a place frees.
    const waiting = await acme.post('claims', claim('wants-7', shared('pre')));
    expect(reasonOf(waiting.body)).toBe('QuotaExceeded');
    await acme.delete('claims/first');
    await eventually(async () => expect((await acme.get('claims/wants-7')).body.status.value).toBe('7'));
  });

  it('frees a place when a lease on a shared pool ends', async () => {
    await sharedPool('leased', ['1..10'], [{ namespace: 'acme', maxAllocations: 1 }]);
    const lease = await acme.post('claims', claim('short', shared('leased'), { leaseSeconds: 60 }));
    expect(lease.body.status.value).toBe('1');
    expect(reasonOf((await acme.post('claims', claim('next', shared('leased')))).body)).toBe('QuotaExceeded');
    // The lease ends: its claim is deleted under the lease's condition, a release.
    const stored = await allot.table.get<Record<string, any>>(objectKey('acme', 'claims', 'short'));
    const { expireClaim } = await import('../../lib/service/leases/leases.ts');
    const clock = vi.spyOn(Date, 'now').mockReturnValue(Date.parse(stored!.leaseExpiresAt) + 1000);
    try {
      await expireClaim({ table: allot.table }, objectKey('acme', 'claims', 'short'), stored as never);
    } finally {
      clock.mockRestore();
    }
    await eventually(async () => expect(reasonOf((await acme.get('claims/next')).body)).toBe('Allocated'));
  });

  it('carves a tenant pool from its claim on the operator shared pool of prefixes', async () => {
    await infra.put('ipprefixpools/regional', {
      apiVersion: API_VERSION,
      kind: 'IPPrefixPool',
      metadata: { name: 'regional' },
      spec: { prefixes: ['10.64.0.0/16'], allocationPrefixLength: 20, sharedWith: [{ namespace: 'acme' }] },
    });
    const vpc = await acme.post(
      'claims',
      claim('vpc', { kind: 'IPPrefixPool', name: 'regional', namespace: 'infra' }),
    );
    expect(vpc.body.status.value).toBe('10.64.0.0/20');
    const carved = await acme.post('ipaddresspools', {
      apiVersion: API_VERSION,
      kind: 'IPAddressPool',
      metadata: { name: 'vpc-addresses' },
      spec: { prefixesFrom: { claimRef: { name: 'vpc' } } },
    });
    expect(carved.status, JSON.stringify(carved.body)).toBe(201);
    expect(carved.body.status.prefixes).toEqual(['10.64.0.0/20']);
    const nic = await acme.post('claims', claim('nic', { kind: 'IPAddressPool', name: 'vpc-addresses' }));
    expect(nic.body.status.value).toBe('10.64.0.0');
    // The claim is the carved pool's: it cannot be released while the pool uses its value.
    expect((await acme.delete('claims/vpc')).status).toBe(409);
  });

  it('serves again a pool whose cascade died part way and was never retried, after one sweep', async () => {
    await sharedPool('halfway', ['1..10'], [{ namespace: 'acme' }]);
    // The cascade's first step, its mark, and then nothing: the request died.
    const key = objectKey('infra', 'indexpools', 'halfway');
    const pool = await allot.table.get<Record<string, any>>(key);
    expect(await allot.table.markDeleting(key, pool!.metadata.uid)).toBe(true);
    expect(reasonOf((await acme.post('claims', claim('after', shared('halfway')))).body)).toBe(
      'PoolNotFound',
    );
    // A sweep soon after leaves it (the cascade may still be at work); one 15 minutes on clears it.
    expect(
      (await sweepNamespace({ table: allot.table }, 'infra', { recheckMs: 0 })).found.abandonedCascade,
    ).toBe(0);
    const later = Date.now() + 16 * 60_000;
    const clock = vi.spyOn(Date, 'now').mockReturnValue(later);
    try {
      const report = await sweepNamespace({ table: allot.table }, 'infra', { recheckMs: 0 });
      expect(report.fixed.abandonedCascade).toBe(1);
    } finally {
      clock.mockRestore();
    }
    await eventually(async () => expect((await acme.get('claims/after')).body.status.value).toBe('1'));
  });

  it('quarantines a tenant value released from a shared pool, and frees the place at once', async () => {
    await sharedPool('held-back', ['1..3'], [{ namespace: 'acme', maxAllocations: 1 }], {
      quarantineSeconds: 300,
    });
    expect((await acme.post('claims', claim('q1', shared('held-back')))).body.status.value).toBe('1');
    expect((await acme.delete('claims/q1')).status).toBe(200);
    await drained();
    // The value is held back; the namespace's place is not: its next claim gets another value.
    await eventually(async () =>
      expect((await infra.get('indexpools/held-back')).body.status.quarantined).toBe('1'),
    );
    const asked = await acme.post('claims', claim('q-again', shared('held-back'), { value: '1' }));
    expect(reasonOf(asked.body)).toBe('ValueQuarantined');
    await drained();
    expect((await acme.post('claims', claim('q2', shared('held-back')))).body.status.value).toBe('2');
  });
});
