/**
 * Quarantine over HTTP (api.md, "Pools": `quarantineSeconds`; docs/leases.md): a value freed in a Recycle
 * pool (a release, an expiry, a delete by hand) is held back for that long: not handed out, not free,
 * counted in `status.quarantined` and shown apart in the occupancy map; a claim asking for it by
 * `spec.value` waits with `ValueQuarantined` and is allocated when it ends (TTL, the expiry run, or a
 * claim that finds it over). Retain pools are not affected; a change applies to values freed after it.
 * Time is the test's: Date.now moves (the service's one clock), the emulated TTL runs when asked.
 */
import { describe, expect, it } from 'vitest';
import { useMovedClock } from '../helpers/moved-clock.ts';
import { createRepairHandler } from '../../functions/repair.ts';
import { API_VERSION, claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import { conditionOf, expectFailure, expectInvalid } from './support.ts';

const { allot, api } = useTestAllot({ ttlIntervalMs: 0 });

const ref = (name: string) => ({ kind: 'IndexPool', name });
const { pass } = useMovedClock();

const drained = () => allot.stream!.drained();

async function claimed(name: string, pool: string, extra: Record<string, unknown> = {}) {
  const answer = await api.post('claims', claim(name, ref(pool), extra));
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

/** Claims then releases `name`, and waits until the stream has worked on the release. */
async function claimedAndReleased(name: string, pool: string): Promise<string> {
  const value = (await claimed(name, pool)).status.value as string;
  expect((await api.delete(`claims/${name}`)).status).toBe(200);
  await drained();
  return value;
}

const statusOf = async (pool: string) => (await api.get(`indexpools/${pool}`)).body.status;

describe('a pool with quarantineSeconds', () => {
  it('refuses a quarantineSeconds out of range, not an integer, or on a pool of a range of lengths', async () => {
    for (const quarantineSeconds of [-1, 31_536_001, 1.5, '60', null, true]) {
      const answer = await api.post('indexpools', indexPool('q-bad', ['1..3'], { quarantineSeconds }));
      expectInvalid(answer, 'spec.quarantineSeconds');
      expect((await api.get('indexpools/q-bad')).status).toBe(404);
    }
    const ranged = {
      apiVersion: API_VERSION,
      kind: 'IPPrefixPool',
      metadata: { name: 'q-ranged' },
      spec: {
        prefixes: ['10.90.0.0/16'],
        allocationPrefixLengths: { min: 20, max: 24, default: 24 },
        quarantineSeconds: 60,
      },
    };
    expectInvalid(await api.post('ipprefixpools', ranged), 'spec.quarantineSeconds');
    for (const quarantineSeconds of [0, 31_536_000]) {
      const answer = await api.put(
        `indexpools/q-edge-${quarantineSeconds}`,
        indexPool(`q-edge-${quarantineSeconds}`, ['1..3'], { quarantineSeconds }),
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      expect(answer.body.spec.quarantineSeconds).toBe(quarantineSeconds);
    }
  });

  it('holds a released value back: not handed out, not free, counted in status.quarantined', async () => {
    await api.post('indexpools', indexPool('q-a', ['1..3'], { quarantineSeconds: 300 }));
    expect((await statusOf('q-a')).quarantined).toBe('0');
    expect(await claimedAndReleased('q-a1', 'q-a')).toBe('1');
    await eventually(async () => expect((await statusOf('q-a')).quarantined).toBe('1'));
    const status = await statusOf('q-a');
    expect(status.allocated).toBe(0);
    expect(status.free).toBe('2');
    // The search skips it, and so does the preview of the next value.
    expect((await claimed('q-a2', 'q-a')).status.value).toBe('2');
    expect((await claimed('q-a3', 'q-a')).status.value).toBe('3');
    const full = await claimed('q-a4', 'q-a');
    expect(full.status.value).toBeUndefined();
    expect(conditionOf(full, 'Allocated')?.reason).toBe('PoolExhausted');
    await drained();
    await eventually(async () => expect((await statusOf('q-a')).free).toBe('0'));
    expect((await statusOf('q-a')).quarantined).toBe('1');
  });

  it('makes a claim for the value by spec.value wait (ValueQuarantined) and allocates it when the time comes', async () => {
    await api.post('indexpools', indexPool('q-v', ['7..9'], { quarantineSeconds: 120 }));
    expect(await claimedAndReleased('q-v1', 'q-v')).toBe('7');
    const waiting = await claimed('q-v2', 'q-v', { value: '7' });
    expect(waiting.status.value).toBeUndefined();
    const allocatedCondition = conditionOf(waiting, 'Allocated');
    expect(allocatedCondition?.status).toBe('False');
    expect(allocatedCondition?.reason).toBe('ValueQuarantined');
    // An allocation object made by hand at the value is refused while it is held back.
    const byHand = await api.post('indices', {
      apiVersion: API_VERSION,
      kind: 'Index',
      metadata: { name: 'q-v-hand' },
      spec: { poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: 'q-v' }, index: 7 },
    });
    expectFailure(byHand, 409, 'AlreadyExists');
    expect(JSON.stringify(byHand.body)).toContain('quarantined');
    // The stream works on the waiting claim's records before the clock moves: later, it would find the
    // quarantine over and end it itself, leaving TTL nothing to do.
    await drained();
    pass(60);
    expect(await allot.ttl!.expireDue()).toBe(0);
    pass(62); // TTL deletes once its time is strictly before now (whole seconds)
    expect(await allot.ttl!.expireDue()).toBeGreaterThanOrEqual(1);
    await drained();
    await eventually(async () => expect((await api.get('claims/q-v2')).body.status.value).toBe('7'));
    await eventually(async () => expect((await statusOf('q-v')).quarantined).toBe('0'));
  });

  it("ends with the repair function's expiry run (deployed: every minute) when TTL is late", async () => {
    await api.post('indexpools', indexPool('q-e', ['1..1'], { quarantineSeconds: 60 }));
    await claimedAndReleased('q-e1', 'q-e');
    await eventually(async () => expect((await statusOf('q-e')).quarantined).toBe('1'));
    const expiry = createRepairHandler({ table: allot.table });
    await expiry({ operation: 'expireLeases' });
    await drained();
    expect((await statusOf('q-e')).quarantined).toBe('1');
    pass(61);
    const run = (await expiry({ operation: 'expireLeases' })) as { expired: number };
    expect(run.expired).toBeGreaterThanOrEqual(1);
    await drained();
    await eventually(async () => expect((await statusOf('q-e')).free).toBe('1'));
    expect((await claimed('q-e2', 'q-e')).status.value).toBe('1');
  });

  it('a claim for the value that finds the quarantine over ends it and takes the value', async () => {
    await api.post('indexpools', indexPool('q-o', ['1..2'], { quarantineSeconds: 60 }));
    await claimedAndReleased('q-o1', 'q-o');
    await eventually(async () => expect((await statusOf('q-o')).quarantined).toBe('1'));
    pass(61);
    expect((await claimed('q-o2', 'q-o', { value: '1' })).status.value).toBe('1');
    await drained();
    await eventually(async () => expect((await statusOf('q-o')).quarantined).toBe('0'));
    expect((await statusOf('q-o')).allocated).toBe(1);
    // Who held 1: q-o1, then nobody (the quarantine, by the object that went), then q-o2.
    await eventually(async () => {
      const items = (await api.get('indexpools/q-o/history?value=1')).body.items;
      expect(items.map((h: Record<string, any>) => [h.claim?.name ?? null, h.ended ?? null])).toEqual([
        ['q-o2', null],
        [null, 'QuarantineOver'],
        ['q-o1', 'Released'],
      ]);
      expect(items[1].allocation.uid).toBe(items[2].allocation.uid);
    });
  });

  it('quarantines an allocation object deleted by hand, and shows quarantined values apart in the occupancy map', async () => {
    await api.post('indexpools', indexPool('q-h', ['10..13'], { quarantineSeconds: 300 }));
    const made = await api.post('indices', {
      apiVersion: API_VERSION,
      kind: 'Index',
      metadata: { name: 'q-h-11' },
      spec: { poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: 'q-h' }, index: 11 },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await claimed('q-h1', 'q-h');
    expect((await api.delete('indices/q-h-11')).status).toBe(200);
    await drained();
    await eventually(async () => expect((await statusOf('q-h')).quarantined).toBe('1'));
    const map = await api.get('indexpools/q-h/occupancy?buckets=4');
    expect(map.status, JSON.stringify(map.body)).toBe(200);
    const buckets = map.body.buckets as { first: string; held: string; quarantined?: string }[];
    expect(buckets.map((b) => [b.first, b.held, b.quarantined ?? '0'])).toEqual([
      ['10', '1', '0'],
      ['11', '1', '1'],
      ['12', '0', '0'],
      ['13', '0', '0'],
    ]);
  });

  it('leaves Retain pools alone: the object keeps the value', async () => {
    await api.post(
      'indexpools',
      indexPool('q-r', ['1..2'], { reclaimPolicy: 'Retain', quarantineSeconds: 300 }),
    );
    await claimedAndReleased('q-r1', 'q-r');
    await eventually(async () => expect((await statusOf('q-r')).allocated).toBe(1));
    expect((await statusOf('q-r')).quarantined).toBe('0');
    expect((await claimed('q-r2', 'q-r')).status.value).toBe('2');
  });

  it('a change of quarantineSeconds applies to values freed after it', async () => {
    await api.post('indexpools', indexPool('q-c', ['1..3'], { quarantineSeconds: 300 }));
    await claimedAndReleased('q-c1', 'q-c');
    await eventually(async () => expect((await statusOf('q-c')).quarantined).toBe('1'));
    const changed = await api.put('indexpools/q-c', indexPool('q-c', ['1..3'], { quarantineSeconds: 0 }));
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    await drained();
    // Still held back: it was freed before the change.
    expect((await statusOf('q-c')).quarantined).toBe('1');
    expect(await claimedAndReleased('q-c2', 'q-c')).toBe('2');
    await eventually(async () => expect((await statusOf('q-c')).free).toBe('2'));
    expect((await statusOf('q-c')).quarantined).toBe('1');
    // Not the value still held back: 2 and 3, in whichever order the search takes them.
    const c3 = await claimed('q-c3', 'q-c');
    const c4 = await claimed('q-c4', 'q-c');
    const values = [c3.status.value, c4.status.value];
    expect(values.sort()).toEqual(['2', '3']);
  });
});
