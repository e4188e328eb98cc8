/**
 * Names of pre-provisioned objects that are the deterministic name of a value of another pool (api.md,
 * "Allocation objects": any valid name is accepted, and the name is the arbiter), over HTTP: IPv4, IPv6
 * and prefix names, a pool created only later, concurrent POSTs of one name, a name already taken by
 * the value's object, deletes and cascades, and a request that dies between its writes
 * (service/allocation/name-holds.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { API_VERSION, claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import { Faults, faultyClient, seededRandom } from '../helpers/faults.ts';
import { HANDLER_DEADLINE_MS } from '../../lib/service/allocation/decide.ts';
import { allocatedState, availableState, expectFailure } from './support.ts';

const faults = new Faults(seededRandom(13));
const { allot, api } = useTestAllot({ apiClient: (endpoint) => faultyClient(endpoint, faults) });

afterEach(() => {
  faults.revive();
  faults.beforeCall = undefined;
  vi.restoreAllMocks();
});

const indexRef = (name: string) => ({ kind: 'IndexPool', name });
const ALLOW_BINDING = 'pool.networking.metal.ironcore.dev/allow-binding';

function object(kind: 'Index' | 'IPAddress' | 'IPPrefix', name: string, pool: string, value: unknown) {
  const poolKind = `${kind}Pool`;
  const field = { Index: 'index', IPAddress: 'address', IPPrefix: 'prefix' }[kind];
  return {
    apiVersion: API_VERSION,
    kind,
    metadata: { name },
    spec: { poolRef: { kind: poolKind, name: pool }, [field]: value },
  };
}

const index = (name: string, pool: string, value: number) => object('Index', name, pool, value);

async function poolStatus(path: string) {
  return (await api.get(path)).body.status as { allocated: number; free: string; total: string };
}

describe('an Index named like a value of a pool that does not exist yet', () => {
  it('is accepted, found by its name, listed under its own pool only', async () => {
    await api.post('indexpools', indexPool('p1', ['1..100']));
    const created = await api.post('indices', index('idx-1', 'p1', 5));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.metadata.name).toBe('idx-1');
    const read = await api.get('indices/idx-1');
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect((await api.get('indices?pool=p1')).body.items.map((i: any) => i.metadata.name)).toEqual(['idx-1']);
    expect((await api.get('indices?pool=idx')).body.items).toEqual([]);
    await eventually(async () => expect((await poolStatus('indexpools/p1')).allocated).toBe(1));
  });

  it('keeps that value from the pool once it is created: claims skip it, counts leave it out', async () => {
    await api.post('indexpools', indexPool('idx', ['1..3']));
    // The held value is neither free nor an allocation object of the pool.
    await eventually(async () =>
      expect(await poolStatus('indexpools/idx')).toMatchObject({ allocated: 0, total: '3', free: '2' }),
    );
    const first = await api.post('claims', claim('idx-a', indexRef('idx')));
    expect(first.body.status.value).toBe('2');
    const wanting = await api.post('claims', claim('idx-b', indexRef('idx'), { value: 1 }));
    expect(allocatedState(wanting.body)).toBe('False/ValueTaken');
    expect(wanting.body.status.conditions[0].message).toContain('idx-1');
    expect((await api.post('claims', claim('idx-c', indexRef('idx')))).body.status.value).toBe('3');
    await eventually(async () => {
      const pool = (await api.get('indexpools/idx')).body;
      expect(pool.status).toMatchObject({ allocated: 2, free: '0' });
      expect(availableState(pool)).toBe('False/Exhausted');
    });
  });

  it('gives the value back when the object is deleted: the waiting claim gets it', async () => {
    const deleted = (await api.delete('indices/idx-1')).body;
    expect(deleted.metadata.name).toBe('idx-1');
    // Gone, or already made anew for the waiting claim (the stream may be that quick): never the same one.
    const after = await api.get('indices/idx-1');
    if (after.status === 200) {
      expect(after.body.metadata.uid).not.toBe(deleted.metadata.uid);
      expect(after.body.spec.claimRef.name).toBe('idx-b');
    } else expectFailure(after, 404, 'NotFound');
    await eventually(async () => {
      const waiting = (await api.get('claims/idx-b')).body;
      expect(waiting.status.value).toBe('1');
      expect(waiting.status.allocationRef.name).toBe('idx-1');
    });
    await eventually(async () =>
      expect(await poolStatus('indexpools/p1')).toMatchObject({ allocated: 0, free: '100' }),
    );
  });
});

describe('names shaped like IP addresses and prefixes of another pool', () => {
  it('an IPv4 name (x-10-0-0-1) holds 10.0.0.1 of pool x', async () => {
    await api.post('ipaddresspools', {
      metadata: { name: 'lan' },
      spec: { prefixes: ['10.1.0.0/24'] },
    });
    await api.post('ipaddresspools', { metadata: { name: 'x' }, spec: { prefixes: ['10.0.0.0/30'] } });
    const created = await api.post('ipaddresses', object('IPAddress', 'x-10-0-0-1', 'lan', '10.1.0.5'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await api.get('ipaddresses/x-10-0-0-1')).body.spec.address).toBe('10.1.0.5');
    const claimRef = { kind: 'IPAddressPool', name: 'x' };
    const taken = await api.post('claims', claim('x-wants-1', claimRef, { value: '10.0.0.1' }));
    expect(allocatedState(taken.body)).toBe('False/ValueTaken');
    const values = [];
    for (const name of ['x-a', 'x-b', 'x-c']) {
      values.push((await api.post('claims', claim(name, claimRef))).body.status.value);
    }
    expect(values).toEqual(['10.0.0.0', '10.0.0.2', '10.0.0.3']);
  });

  it('an IPv6 name in full holds that address of the other pool, and is unique', async () => {
    await api.post('ipaddresspools', { metadata: { name: 'six' }, spec: { prefixes: ['2001:db8:1::/64'] } });
    await api.post('ipaddresspools', { metadata: { name: 'v6' }, spec: { prefixes: ['2001:db8::/126'] } });
    const name = 'v6-2001-0db8-0000-0000-0000-0000-0000-0001';
    const created = await api.post('ipaddresses', object('IPAddress', name, 'six', '2001:db8:1::9'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await api.get(`ipaddresses/${name}`)).body.spec.address).toBe('2001:db8:1::9');
    expectFailure(
      await api.post('ipaddresses', object('IPAddress', name, 'six', '2001:db8:1::10')),
      409,
      'AlreadyExists',
    );
    const claimRef = { kind: 'IPAddressPool', name: 'v6' };
    const first = await api.post('claims', claim('v6-a', claimRef));
    const second = await api.post('claims', claim('v6-b', claimRef));
    expect([first.body.status.value, second.body.status.value]).toEqual(['2001:db8::', '2001:db8::2']);
    // The server's object for 2001:db8::2 has its deterministic name; ::1 has none (the name is held).
    expect(second.body.status.allocationRef.name).toBe('v6-2001-0db8-0000-0000-0000-0000-0000-0002');
  });

  it('a prefix name (pp-10-0-0-0-24) holds that prefix of pool pp', async () => {
    const prefixPool = (name: string, prefixes: string[]) => ({
      metadata: { name },
      spec: { prefixes, allocationPrefixLength: 24 },
    });
    await api.post('ipprefixpools', prefixPool('wide', ['192.168.0.0/16']));
    const created = await api.post(
      'ipprefixes',
      object('IPPrefix', 'pp-10-0-0-0-24', 'wide', '192.168.7.0/24'),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // Pool pp is created after the object: its first claim skips the held /24.
    await api.post('ipprefixpools', prefixPool('pp', ['10.0.0.0/22']));
    const got = await api.post('claims', claim('pp-a', { kind: 'IPPrefixPool', name: 'pp' }));
    expect(got.body.status.value).toBe('10.0.1.0/24');
    await eventually(async () =>
      expect(await poolStatus('ipprefixpools/pp')).toMatchObject({ allocated: 1, total: '4', free: '2' }),
    );
  });
});

describe('a name whose value is held already, or wanted by several at once', () => {
  it('answers 409 when the value is held by an object of that name, or of another name', async () => {
    await api.post('indexpools', indexPool('q', ['1..10']));
    const claimed = await api.post('claims', claim('q-claim', indexRef('q')));
    expect(claimed.body.status.allocationRef.name).toBe('q-1');
    expectFailure(await api.post('indices', index('q-1', 'p1', 7)), 409, 'AlreadyExists');
    expect((await api.post('indices', index('custom-two', 'q', 2))).status).toBe(201);
    const inTheWay = await api.post('indices', index('q-2', 'p1', 8));
    expectFailure(inTheWay, 409, 'AlreadyExists');
    expect(inTheWay.body.message).toContain('custom-two');
    // Nothing of the refused objects stays: their values are free.
    for (const value of [7, 8])
      expect((await api.post('indices', index(`p1-${value}`, 'p1', value))).status).toBe(201);
  });

  it('five concurrent POSTs of one name: one 201, four 409, one object', async () => {
    const answers = await Promise.all(
      [11, 12, 13, 14, 15].map((value) => api.post('indices', index('race-3', 'p1', value))),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409]);
    for (const answer of answers.filter((one) => one.status === 409))
      expectFailure(answer, 409, 'AlreadyExists');
    const winner = answers.find((answer) => answer.status === 201)!.body;
    expect((await api.get('indices/race-3')).body).toEqual(winner);
    const inPool = (await api.get('indices?pool=p1')).body.items.filter((item: any) =>
      [11, 12, 13, 14, 15].includes(item.spec.index),
    );
    expect(inPool.map((item: any) => item.metadata.name)).toEqual(['race-3']);
  });

  it('a PUT of the name again replaces the object (200), and binds to the claim it names', async () => {
    const body = (labels: Record<string, string>) => ({
      metadata: { name: 'bind-1', labels, annotations: { [ALLOW_BINDING]: 'true' } },
      spec: { poolRef: indexRef('p1'), index: 20, claimRef: { name: 'binder' } },
    });
    expect((await api.put('indices/bind-1', body({}))).status).toBe(201);
    const again = await api.put('indices/bind-1', body({ a: 'b' }));
    expect(again.status).toBe(200);
    expect(again.body.metadata.labels).toEqual({ a: 'b' });
    const binder = await api.post('claims', claim('binder', indexRef('p1')));
    expect(binder.body.status).toMatchObject({ value: '20', allocationRef: { name: 'bind-1' } });
  });

  it('a cascade of the object`s pool takes its name with it', async () => {
    await api.post('indexpools', indexPool('gone', ['1..5']));
    expect((await api.post('indices', index('kept-4', 'gone', 3))).status).toBe(201);
    expect((await api.delete('indexpools/gone?cascade=true')).status).toBe(200);
    await api.post('indexpools', indexPool('kept', ['4']));
    const got = await api.post('claims', claim('kept-a', indexRef('kept')));
    expect(got.body.status.value).toBe('4');
  });

  it('a pool deleted and created again still finds the value its name holds', async () => {
    await api.post('indexpools', indexPool('again', ['1..2']));
    expect((await api.post('indices', index('again-1', 'p1', 30))).status).toBe(201);
    await eventually(async () => expect((await poolStatus('indexpools/again')).free).toBe('1'));
    expect((await api.delete('indexpools/again')).status).toBe(200);
    await api.post('indexpools', indexPool('again', ['1..2']));
    await eventually(async () =>
      expect(await poolStatus('indexpools/again')).toMatchObject({ allocated: 0, free: '1' }),
    );
    expect((await api.post('claims', claim('again-a', indexRef('again')))).body.status.value).toBe('2');
  });
});

describe('a pre-provision whose request dies between its writes', () => {
  /** The handler dies just before its first call that matches. */
  function dieBefore(match: (operation: string, input: any) => boolean) {
    faults.beforeCall = (operation, input) => {
      if (match(operation, input)) {
        faults.dieBeforeCall(1);
        faults.beforeCall = undefined;
      }
    };
  }
  // The clock moves on past every deadline set so far, as a dead request's Lambda timeout would.
  const passDeadline = () => {
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() + HANDLER_DEADLINE_MS + 1000);
  };

  it('before its object: the name is taken until the deadline, then free again', async () => {
    await api.post('indexpools', indexPool('crash', ['1..3']));
    dieBefore((operation, input) => operation === 'PutItem' && input.Item?.t === 'alloc');
    expect((await api.post('indices', index('crash-1', 'p1', 40))).status).toBe(500);
    faults.revive();
    expectFailure(await api.get('indices/crash-1'), 404, 'NotFound');
    // Being created, as far as anyone can tell: the name is not given twice.
    expectFailure(await api.post('indices', index('crash-1', 'p1', 41)), 409, 'AlreadyExists');
    passDeadline();
    // The stream function repairs the hold its request left: value 1 of crash is free again.
    await eventually(async () => {
      const got = await api.put('claims/crash-a', claim('crash-a', indexRef('crash'), { value: 1 }));
      expect(got.body.status.value).toBe('1');
    });
    // The name is now the server's, for the claim's object; the dead request left no object.
    expect((await api.get('indices/crash-1')).body.spec).toMatchObject({
      poolRef: { name: 'crash' },
      index: 1,
    });
    const objects = (await api.get('indices?pool=p1')).body.items.map((item: any) => item.spec.index);
    expect(objects).not.toContain(40);
  });

  it('after its object, before the confirm: the object stands and its hold is confirmed', async () => {
    dieBefore(
      (operation, input) =>
        operation === 'UpdateItem' && input.Key?.pk?.startsWith('A#default#IndexPool#crash#'),
    );
    expect((await api.post('indices', index('crash-2', 'p1', 42))).status).toBe(500);
    faults.revive();
    expect((await api.get('indices/crash-2')).body.spec.index).toBe(42);
    passDeadline();
    const hold = { pk: 'A#default#IndexPool#crash#0', sk: '0000000000000002' };
    await eventually(async () => expect((await allot.table.get<any>(hold))?.state).toBe('held'));
    expectFailure(await api.post('indices', index('crash-2', 'p1', 43)), 409, 'AlreadyExists');
    const wanting = await api.post('claims', claim('crash-b', indexRef('crash'), { value: 2 }));
    expect(allocatedState(wanting.body)).toBe('False/ValueTaken');
  });
});

describe('a prefix name of a pool of a range of lengths', () => {
  const rangedRef = (name: string) => ({ kind: 'IPPrefixPool', name });
  const rangedPool = (name: string, prefixes: string[]) => ({
    metadata: { name },
    spec: { prefixes, allocationPrefixLengths: { min: 23, max: 24, default: 24 } },
  });
  const holder = (name: string, prefix: string) => object('IPPrefix', name, 'holders', prefix);

  it('held before the pool exists: no claim gets it, nor a prefix overlapping it', async () => {
    await api.post('ipprefixpools', {
      metadata: { name: 'holders' },
      spec: { prefixes: ['192.168.0.0/16'], allocationPrefixLength: 24 },
    });
    expect((await api.post('ipprefixes', holder('rr-10-8-0-0-24', '192.168.1.0/24'))).status).toBe(201);
    await api.post('ipprefixpools', rangedPool('rr', ['10.8.0.0/22']));
    // Once the stream has counted it, the held /24 is not free (and claims skip it without trying).
    await eventually(async () =>
      expect(await poolStatus('ipprefixpools/rr')).toMatchObject({ allocated: 0, total: '4', free: '3' }),
    );
    // Claims without a value pass it by: the first /24 is the next one, the /23 the upper one.
    const any24 = await api.post('claims', claim('rr-24', rangedRef('rr')));
    expect(any24.body.status.value).toBe('10.8.1.0/24');
    const any23 = await api.post('claims', claim('rr-23', rangedRef('rr'), { prefixLength: 23 }));
    expect(any23.body.status.value).toBe('10.8.2.0/23');
    const exact = await api.post('claims', claim('rr-exact', rangedRef('rr'), { value: '10.8.0.0/24' }));
    expect(allocatedState(exact.body)).toBe('False/ValueTaken');
    expect(exact.body.status.conditions[0].message).toContain('rr-10-8-0-0-24');
    const wide = await api.post('claims', claim('rr-wide', rangedRef('rr'), { value: '10.8.0.0/23' }));
    expect(allocatedState(wide.body)).toBe('False/ValueTaken');
    // Held, not free; no allocation object.
    await eventually(async () =>
      expect(await poolStatus('ipprefixpools/rr')).toMatchObject({ allocated: 2, total: '4', free: '0' }),
    );
  });

  it('the claim of the held prefix gets it once the hold goes', async () => {
    expect((await api.delete('ipprefixes/rr-10-8-0-0-24')).status).toBe(200);
    await eventually(async () => {
      const waiting = (await api.get('claims/rr-exact')).body;
      expect(waiting.status.value).toBe('10.8.0.0/24');
    });
    // The /23 still overlaps the /24 taken meanwhile.
    expect(allocatedState((await api.get('claims/rr-wide')).body)).toBe('False/ValueTaken');
    await eventually(async () =>
      expect(await poolStatus('ipprefixpools/rr')).toMatchObject({ allocated: 3, free: '0' }),
    );
  });

  it('held while the pool exists: claims pass it by, and one that waits gets it when it goes', async () => {
    await api.post('ipprefixpools', rangedPool('rs', ['10.9.0.0/22']));
    expect((await api.post('ipprefixes', holder('rs-10-9-1-0-24', '192.168.2.0/24'))).status).toBe(201);
    expect((await api.post('ipprefixes', holder('rs-10-9-3-0-24', '192.168.4.0/24'))).status).toBe(201);
    await eventually(async () =>
      expect(await poolStatus('ipprefixpools/rs')).toMatchObject({ allocated: 0, free: '2' }),
    );
    // Both /23s overlap a held /24.
    const wide = await api.post('claims', claim('rs-wide', rangedRef('rs'), { prefixLength: 23 }));
    expect(allocatedState(wide.body)).toBe('False/PoolExhausted');
    const values = new Map<string, string | undefined>();
    for (const name of ['rs-a', 'rs-b', 'rs-c'])
      values.set(name, (await api.post('claims', claim(name, rangedRef('rs')))).body.status.value);
    // Which free /24 a claim gets is not the contract's; that the held ones are never given is.
    expect([...values.values()].filter(Boolean).sort()).toEqual(['10.9.0.0/24', '10.9.2.0/24']);
    const waiting = [...values.keys()].find((name) => values.get(name) === undefined)!;
    expect(allocatedState((await api.get(`claims/${waiting}`)).body)).toBe('False/PoolExhausted');
    await eventually(async () =>
      expect(await poolStatus('ipprefixpools/rs')).toMatchObject({ allocated: 2, free: '0' }),
    );
    // A hold goes: the waiting /24 gets the prefix it held.
    expect((await api.delete('ipprefixes/rs-10-9-1-0-24')).status).toBe(200);
    await eventually(async () =>
      expect((await api.get(`claims/${waiting}`)).body.status.value).toBe('10.9.1.0/24'),
    );
  });

  it('a pool deleted and created again keeps the prefix held, not free, not handed out', async () => {
    await api.post('ipprefixpools', rangedPool('rq', ['10.7.0.0/22']));
    expect((await api.post('ipprefixes', holder('rq-10-7-2-0-23', '192.168.5.0/24'))).status).toBe(201);
    await eventually(async () =>
      expect(await poolStatus('ipprefixpools/rq')).toMatchObject({ allocated: 0, free: '2' }),
    );
    expect((await api.delete('ipprefixpools/rq')).status).toBe(200);
    await api.post('ipprefixpools', rangedPool('rq', ['10.7.0.0/22']));
    await eventually(async () =>
      expect(await poolStatus('ipprefixpools/rq')).toMatchObject({ allocated: 0, free: '2' }),
    );
    const values = [];
    for (const name of ['rq-a', 'rq-b', 'rq-c'])
      values.push((await api.post('claims', claim(name, rangedRef('rq')))).body.status.value);
    expect(values.slice(0, 2).sort()).toEqual(['10.7.0.0/24', '10.7.1.0/24']);
    expect(values[2]).toBeUndefined();
  });

  it('cannot be held where an object of the pool overlaps it (409, naming the object)', async () => {
    const taken = await api.post('ipprefixes', holder('rs-10-9-2-0-23', '192.168.3.0/24'));
    expectFailure(taken, 409, 'AlreadyExists');
    expect(taken.body.message).toContain('rs-10-9-2-0-24');
    // Nothing of it stays: the holders' pool still has that /24 free.
    expect((await api.post('ipprefixes', holder('h-3', '192.168.3.0/24'))).status).toBe(201);
  });
});
