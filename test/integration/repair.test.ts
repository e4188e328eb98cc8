/**
 * The repair sweep (lib/service/repair/sweep.ts) against the real store: on a healthy namespace it only reads
 * (write requests counted by an SDK middleware on its client); with stream records lost for good it finds
 * each kind of inconsistency, fixes it, and a second sweep then finds nothing; a young orphan is left to
 * its grace period; a dry run changes nothing; a small budget sweeps a namespace over several runs; and an
 * aborted signal (the local server stopping) ends a run, even one waiting to look again.
 */
import '../helpers/quiet.ts';
import { getEventListeners } from 'node:events';
import type { DynamoDBRecord } from 'aws-lambda';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHistoryHandler } from '../../functions/history.ts';
import { createStreamHandler } from '../../functions/stream.ts';
import { HISTORY_FILTER_PATTERNS } from '../../lib/cloud/stream-filter.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import type { AllocationRecord, ClaimRecord, NameHoldRecord } from '../../lib/domain/objects/records.ts';
import { sweepNamespace, REPAIR_KINDS, type RepairReport } from '../../lib/service/repair/sweep.ts';
import { allocationKey, objectKey, repairCursorKey } from '../../lib/store/keys.ts';
import { Table } from '../../lib/store/table.ts';
import { claim, client, eventually, indexPool, startTestAllot } from '../helpers/allot.ts';
import { Faults, faultyClient, seededRandom } from '../helpers/faults.ts';
import { StreamQueue } from '../helpers/stream-queue.ts';
import { PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ipPrefixValues } from '../../lib/domain/values/ip.ts';
import type { ParsedValue } from '../../lib/domain/values/values.ts';
import { rangedAllocationKey } from '../../lib/store/overlaps.ts';
import { poolKeyOf } from '../../lib/store/keys.ts';
import { bitmapsOfMembers, holdMemberId, memberId } from '../../lib/service/counts/runs.ts';

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

let allot: LocalAllot;
let queue: StreamQueue;
/** The history function's own reader, which loses nothing here: what it keeps (holdings) stays in step. */
let historyQueue: StreamQueue;
let streamHandler: ReturnType<typeof createStreamHandler>;
let historyHandler: ReturnType<typeof createHistoryHandler>;
const random = seededRandom(14);

beforeAll(async () => {
  allot = await startTestAllot({ stream: false });
  queue = new StreamQueue(await allot.store.changes(allot.table.tableName));
  historyQueue = new StreamQueue(await allot.store.changes(allot.table.tableName), HISTORY_FILTER_PATTERNS);
  streamHandler = createStreamHandler({ table: allot.table });
  historyHandler = createHistoryHandler({ table: allot.table });
});
afterAll(async () => {
  await queue.close();
  await historyQueue.close();
  await allot.close();
});

const drain = async () => {
  await queue.drain((event) => streamHandler(event), random);
  await historyQueue.drain((event) => historyHandler(event), random);
};

/** A sweep whose every DynamoDB call is recorded by a middleware on its own client. */
async function recordedSweep(namespace: string, options: Parameters<typeof sweepNamespace>[2] = {}) {
  const recorder = new Faults(random);
  recorder.record = true;
  const sdk = faultyClient(allot.store.endpoint, recorder);
  try {
    const report = await sweepNamespace(
      { table: new Table({ tableName: allot.table.tableName, client: sdk }) },
      namespace,
      options,
    );
    const writes = recorder.calls.filter((call) => WRITES.has(call.operation));
    return { report, calls: recorder.calls, writes };
  } finally {
    sdk.destroy();
  }
}

const none = () => Object.fromEntries(REPAIR_KINDS.map((kind) => [kind, 0]));

/** Whether a record is about the item of `type` named `name` (a claim, pool or allocation object). */
function about(record: DynamoDBRecord, type: string, name: string, eventName?: string): boolean {
  const image = unmarshall((record.dynamodb?.NewImage ?? record.dynamodb?.OldImage) as never);
  return image.t === type && image.metadata?.name === name && (!eventName || record.eventName === eventName);
}

/** A claim "idle" left waiting (PoolExhausted) as if its wake-up was lost: written directly. */
async function writeIdleClaim(ns: string, spec: ClaimRecord['spec'], message: string) {
  await allot.table.createObject(objectKey(ns, 'claims', 'idle'), {
    t: 'claim',
    metadata: {
      name: 'idle',
      namespace: ns,
      uid: 'uid-idle',
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: {},
      annotations: {},
    },
    spec,
    status: {
      conditions: [
        {
          type: 'Allocated',
          status: 'False',
          reason: 'PoolExhausted',
          message,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
    phase: 'Waiting',
    rv: 1,
  });
}

async function items(namespace: string) {
  const page = await allot.table.doc.send(
    new ScanCommand({ TableName: allot.table.tableName, ConsistentRead: true }),
  );
  const mine = (page.Items ?? []).filter((item) => item.metadata?.namespace === namespace);
  return {
    claims: mine.filter((item) => item.t === 'claim') as ClaimRecord[],
    allocations: mine.filter((item) => item.t === 'alloc') as AllocationRecord[],
  };
}

/** What must hold in a namespace once the stream has drained: the drained invariants of the model. */
async function violations(namespace: string, pools: string[]): Promise<string[]> {
  const api = client(allot.url, namespace);
  const { claims, allocations } = await items(namespace);
  const found: string[] = [];
  const uids = new Set(claims.map((c) => c.metadata.uid));
  for (const a of allocations)
    if (a.spec.claimRef?.uid && !uids.has(a.spec.claimRef.uid))
      found.push(`${a.metadata.name} is bound to a missing claim`);
  for (const c of claims) if (c.phase === 'Allocating') found.push(`${c.metadata.name} is Allocating`);
  for (const c of claims)
    if (c.phase === 'Allocated' && !allocations.some((a) => a.spec.claimRef?.uid === c.metadata.uid))
      found.push(`${c.metadata.name} holds no object`);
  for (const name of pools) {
    const pool = (await api.get(`indexpools/${name}`)).body;
    const held = allocations.filter((a) => a.spec.poolRef.name === name).length;
    if (pool.status?.allocated !== held)
      found.push(`pool ${name} says ${pool.status?.allocated} allocated, ${held} objects exist`);
  }
  return found;
}

describe('the repair sweep', () => {
  it('only reads in a healthy namespace', async () => {
    const ns = 'healthy';
    const api = client(allot.url, ns);
    await api.post('indexpools', indexPool('small', ['1..3']));
    await api.post('indexpools', indexPool('kept', ['1..5'], { reclaimPolicy: 'Retain' }));
    await api.post('ipaddresspools', {
      metadata: { name: 'ips' },
      spec: { prefixes: ['10.0.0.0/29'] },
    });
    for (const name of ['a1', 'a2', 'a3', 'a4'])
      await api.post('claims', claim(name, { kind: 'IndexPool', name: 'small' }));
    await api.post('claims', claim('b1', { kind: 'IndexPool', name: 'kept' }));
    await api.post('claims', claim('ip1', { kind: 'IPAddressPool', name: 'ips' }));
    // A pool of a range of prefix lengths (issue 15): its summaries are member runs and its counts count
    // objects, which the sweep checks by members; its claims of several lengths and a user's prefix.
    expect(
      (
        await api.post('ipprefixpools', {
          metadata: { name: 'lengths' },
          spec: {
            prefixes: ['10.8.0.0/16'],
            allocationPrefixLengths: { min: 20, max: 28, default: 24 },
          },
        })
      ).status,
    ).toBe(201);
    for (const [name, prefixLength] of [
      ['r24', undefined],
      ['r20', 20],
      ['r28', 28],
      ['r26', 26],
    ] as const) {
      const spec = prefixLength === undefined ? {} : { prefixLength };
      const made = await api.post('claims', claim(name, { kind: 'IPPrefixPool', name: 'lengths' }, spec));
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    expect(
      (
        await api.post('ipprefixes', {
          metadata: { name: 'lengths-10-8-240-0-22' },
          spec: { poolRef: { kind: 'IPPrefixPool', name: 'lengths' }, prefix: '10.8.240.0/22' },
        })
      ).status,
    ).toBe(201);
    await api.post('claims', claim('early', { kind: 'IndexPool', name: 'later' }));
    await api.post('claims', claim('pick', { kind: 'IndexPool', name: 'kept' }, { value: 2 }));
    await api.post('indices', {
      metadata: { name: 'kept-5' },
      spec: { poolRef: { kind: 'IndexPool', name: 'kept' }, index: 5, claimRef: { name: 'future' } },
    });
    // A name that stands for value 6 of pool wide holds that value (issue 13): held, yet no object of wide.
    await api.post('indexpools', indexPool('wide', ['1..10']));
    expect(
      (
        await api.post('indices', {
          metadata: { name: 'wide-6' },
          spec: { poolRef: { kind: 'IndexPool', name: 'kept' }, index: 4 },
        })
      ).status,
    ).toBe(201);
    await drain();
    expect((await api.delete('claims/b1')).status).toBe(200); // Retain: uid cleared, offered to the name
    await drain();
    expect((await api.get('claims/a4')).body.status.conditions[0].reason).toBe('PoolExhausted');

    const { report, calls, writes } = await recordedSweep(ns);
    expect(writes).toEqual([]);
    expect(report.found).toEqual(none());
    expect(report.complete).toBe(true);
    // Reads only (the open holdings' marks are checked against their copies by BatchGetItem).
    expect(new Set(calls.map((call) => call.operation))).toEqual(
      new Set(['GetItem', 'Query', 'BatchGetItem']),
    );
    expect(await violations(ns, ['small', 'kept'])).toEqual([]);
    expect((await api.get('indexpools/wide')).body.status).toMatchObject({ allocated: 0, free: '9' });
    expect((await api.get('ipprefixpools/lengths')).body.status).toMatchObject({ allocated: 5 });
  });

  it('finds and fixes what lost stream records leave behind, then finds nothing', async () => {
    const ns = 'lossy';
    const api = client(allot.url, ns);
    await api.post('indexpools', indexPool('r', ['1..20']));
    await api.post('indexpools', indexPool('k', ['1..20'], { reclaimPolicy: 'Retain' }));
    for (const name of ['gone', 'held'])
      await api.post('claims', claim(name, { kind: 'IndexPool', name: 'r' }));
    await api.post('claims', claim('kept', { kind: 'IndexPool', name: 'k' }));
    await api.post('claims', claim('early', { kind: 'IndexPool', name: 'late' }));
    await api.post('indices', {
      metadata: { name: 'r-9' },
      spec: { poolRef: { kind: 'IndexPool', name: 'r' }, index: 9, claimRef: { name: 'nobody' } },
    });
    await drain();
    const lost: number[] = [];
    // A release whose record is lost: Recycle never deletes, Retain never clears the uid.
    await api.delete('claims/gone');
    await api.delete('claims/kept');
    lost.push(await queue.lose((r) => r.eventName === 'REMOVE'));
    // A new allocation whose record is lost: its bit and the counts never see it.
    await api.post('claims', claim('fresh', { kind: 'IndexPool', name: 'r' }));
    lost.push(await queue.lose((r) => r.eventName === 'INSERT'));
    // A pool whose creation record is lost: its waiting claim never wakes, and it has no counts.
    await api.post('indexpools', indexPool('late', ['1..5']));
    lost.push(await queue.lose((r) => about(r, 'pool', 'late')));
    // An object deleted under its claim, and the object offered to a name, both records lost.
    const heldValue = (await api.get('claims/held')).body.status.value;
    await api.delete(`indices/r-${heldValue}`);
    await api.delete('indices/r-9');
    lost.push(await queue.lose((r) => r.eventName === 'REMOVE'));
    // A claim whose handler died mid-allocation, its record lost.
    await allot.table.createObject(objectKey(ns, 'claims', 'stuck'), {
      t: 'claim',
      metadata: {
        name: 'stuck',
        namespace: ns,
        uid: 'uid-stuck',
        generation: 1,
        creationTimestamp: '2026-01-01T00:00:00Z',
        labels: {},
        annotations: {},
      },
      spec: { poolRef: { kind: 'IndexPool', name: 'r' } },
      status: { conditions: [] },
      phase: 'Allocating',
      allocatingUntil: new Date(Date.now() - 1000).toISOString(),
      rv: 1,
    });
    lost.push(await queue.lose((r) => about(r, 'claim', 'stuck')));
    // A claim left waiting although its pool has room (its wake-up was lost), its record lost too.
    await writeIdleClaim(ns, { poolRef: { kind: 'IndexPool', name: 'k' } }, 'no candidate of k is free');
    lost.push(await queue.lose((r) => about(r, 'claim', 'idle')));
    expect(lost.every((n) => n > 0)).toBe(true);
    await drain();
    expect((await violations(ns, ['r', 'k', 'late'])).length).toBeGreaterThan(0);

    const { report } = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    for (const kind of [
      'orphanedAllocation',
      'summaryBit',
      'poolCounts',
      'waitingClaim',
      'stuckClaim',
      'lostAllocation',
      'staleStub',
    ] as const) {
      expect(report.found[kind], kind).toBeGreaterThan(0);
      expect(report.fixed[kind], kind).toBe(report.found[kind]);
    }
    await drain();
    expect(await violations(ns, ['r', 'k', 'late'])).toEqual([]);
    expect((await api.get('claims/early')).body.status.conditions[0].reason).toBe('Allocated');
    expect((await api.get('claims/held')).body.status.conditions[0].reason).toBe('Allocated');
    expect((await allot.table.get<{ t: string }>(objectKey(ns, 'claims', 'nobody')))?.t).toBeUndefined();
    const kept = (await items(ns)).allocations.find((a) => a.spec.claimRef?.name === 'kept');
    expect(kept?.spec.claimRef).toEqual({ name: 'kept', uid: '' });

    const again = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(again.report.found).toEqual(none());
    expect(again.writes).toEqual([]);
  });

  const userPrefix = (name: string, prefix: string) => ({
    metadata: { name },
    spec: { poolRef: { kind: 'IPPrefixPool', name: 'rl' }, prefix },
  });

  it('mends a pool of a range of lengths: members, held prefixes, counts, waiting claims, unchecked objects', async () => {
    const ns = 'ranged';
    const api = client(allot.url, ns);
    const ref = { kind: 'IPPrefixPool', name: 'rl' };
    // 10.20.0.0/16 in /28s is 4096 finest slots: one group summary.
    await api.post('ipprefixpools', {
      metadata: { name: 'rl' },
      spec: { prefixes: ['10.20.0.0/16'], allocationPrefixLengths: { min: 20, max: 28, default: 24 } },
    });
    await api.post('ipprefixpools', {
      metadata: { name: 'other' },
      spec: { prefixes: ['192.168.0.0/16'], allocationPrefixLength: 24 },
    });
    await api.post('claims', claim('r20', ref, { prefixLength: 20 }));
    await api.post('claims', claim('r24', ref));
    // A name that holds 10.20.255.0/24 of rl (issue 13): held, and no object of rl.
    const holder = {
      metadata: { name: 'rl-10-20-255-0-24' },
      spec: { poolRef: { kind: 'IPPrefixPool', name: 'other' }, prefix: '192.168.1.0/24' },
    };
    expect((await api.post('ipprefixes', holder)).status).toBe(201);
    await drain();
    const id = { namespace: ns, kind: 'IPPrefixPool' as const, name: 'rl' };
    const group = { family: 4 as const, group: 0xa14n };
    const healthy = await allot.table.summaries.readGroup(id, group);
    const held = holdMemberId(0xa14ff0n, 4);
    expect(healthy.members).toContain(held);
    expect((await api.get('ipprefixpools/rl')).body.status).toMatchObject({ allocated: 2 });

    // Lost records, written as they leave the table: r20's member gone, a member of a /24 that has no
    // object, the hold's member gone, and counts that say 7.
    const r20 = (await api.get('claims/r20')).body.status.value as string;
    expect(r20).toBe('10.20.0.0/20');
    const members = new Set(healthy.members);
    members.delete(memberId(0xa14000n, 8));
    members.delete(held);
    const stray = memberId(0xa14800n, 4); // 10.20.128.0/24
    members.add(stray);
    const { bits, holds } = bitmapsOfMembers(members, group.group, healthy.bits.length);
    expect(
      await allot.table.summaries.writeGroup(id, group, bits, healthy.version, [], { holds }, members),
    ).toBe(true);
    await allot.table.doc.send(
      new UpdateCommand({
        TableName: allot.table.tableName,
        Key: poolKeyOf(id),
        UpdateExpression: 'SET #c.allocated = :n',
        ExpressionAttributeNames: { '#c': 'counts' },
        ExpressionAttributeValues: { ':n': 7 },
      }),
    );

    const { report } = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(report.found.summaryBit).toBe(3);
    expect(report.found.poolCounts).toBe(1);
    expect(report.fixed).toEqual(report.found);
    await drain();
    const mended = await allot.table.summaries.readGroup(id, group);
    expect(mended.members).toContain(memberId(0xa14000n, 8));
    expect(mended.members).toContain(held);
    expect(mended.members).not.toContain(stray);
    expect(mended.bits).toEqual(bitmapsOfMembers(mended.members, group.group, mended.bits.length).bits);
    expect(mended.holds).toEqual(bitmapsOfMembers([held], group.group, mended.bits.length).bits);
    expect((await api.get('ipprefixpools/rl')).body.status).toMatchObject({ allocated: 2 });

    // A claim left waiting although a /22 is free (its wake-up was lost), its record lost too.
    await writeIdleClaim(ns, { poolRef: ref, prefixLength: 22 }, 'no /22 of rl is free');
    expect(await queue.lose((r) => about(r, 'claim', 'idle'))).toBe(1);
    const woken = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(woken.report.found).toEqual({ ...none(), waitingClaim: 1 });
    expect(woken.report.fixed).toEqual(woken.report.found);
    await drain();
    expect((await api.get('claims/idle')).body.status.value).toMatch(/\/22$/);
    expect((await api.get('ipprefixpools/rl')).body.status).toMatchObject({ allocated: 3 });

    // Users' prefixes whose handlers died between their put and their check, their records lost: one
    // that overlaps nothing (10.20.64.0/24) and one written over r20's /20 (10.20.0.0/21).
    expect((await api.post('ipprefixes', userPrefix('u-free', '10.20.64.0/24'))).status).toBe(201);
    await drain();
    const layout = { family: 4 as const, min: 20, max: 28 };
    const parsed = (text: string) => ipPrefixValues.parse(text) as { ok: true; value: ParsedValue };
    const freeKey = rangedAllocationKey(id, layout, parsed('10.20.64.0/24').value);
    const free = (await allot.table.get<AllocationRecord>(freeKey))!;
    const past = Date.now() - 1000;
    await allot.table.doc.send(
      new PutCommand({ TableName: allot.table.tableName, Item: { ...free, unchecked: past } }),
    );
    const overKey = rangedAllocationKey(id, layout, parsed('10.20.0.0/21').value);
    const over = {
      ...free,
      ...overKey,
      metadata: { ...free.metadata, name: 'u-over', uid: 'uid-over' },
      value: '10.20.0.0/21',
      spec: { ...free.spec, prefix: '10.20.0.0/21' },
      unchecked: past,
    };
    await allot.table.doc.send(new PutCommand({ TableName: allot.table.tableName, Item: over }));
    expect(await queue.lose((r) => about(r, 'alloc', 'u-free') || about(r, 'alloc', 'u-over'))).toBe(2);
    const checked = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(checked.report.found.uncheckedObject).toBe(2);
    expect(checked.report.fixed.uncheckedObject).toBe(2);
    expect((await allot.table.get<AllocationRecord>(freeKey))?.unchecked).toBeUndefined();
    expect((await allot.table.get<AllocationRecord>(freeKey))?.metadata.name).toBe('u-free');
    expect(await allot.table.get(overKey)).toBeUndefined();
    await drain();
    expect((await api.get('ipprefixpools/rl')).body.status).toMatchObject({ allocated: 4 });

    // A claim's handler that died between its put and its check, over r20's /20, its records lost: the
    // sweep checks the object before it settles the claim on it, takes it back and allocates again.
    await allot.table.createObject(objectKey(ns, 'claims', 'dead'), {
      t: 'claim',
      metadata: {
        name: 'dead',
        namespace: ns,
        uid: 'uid-dead',
        generation: 1,
        creationTimestamp: '2026-01-01T00:00:00Z',
        labels: {},
        annotations: {},
      },
      spec: { poolRef: ref, prefixLength: 21 },
      status: { conditions: [] },
      phase: 'Allocating',
      allocatingUntil: new Date(past).toISOString(),
      rv: 1,
    });
    const { unchecked: _unchecked, ...confirmed } = over;
    const deadObject = {
      ...confirmed,
      metadata: { ...over.metadata, name: 'rl-10-20-0-0-21', uid: 'uid-dead-object' },
      origin: 'claim',
      spec: { ...over.spec, claimRef: { name: 'dead', uid: 'uid-dead' } },
    };
    await allot.table.doc.send(new PutCommand({ TableName: allot.table.tableName, Item: deadObject }));
    expect(await queue.lose((r) => about(r, 'claim', 'dead') || about(r, 'alloc', 'rl-10-20-0-0-21'))).toBe(
      2,
    );
    const settled = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(settled.report.found.unsettledClaim).toBe(1);
    expect(await allot.table.get(overKey)).toBeUndefined();
    await drain();
    const dead = (await api.get('claims/dead')).body;
    expect(dead.status.value).toMatch(/\/21$/);
    expect(dead.status.value.startsWith('10.20.0.') || dead.status.value.startsWith('10.20.8.')).toBe(false);

    const again = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(again.report.found).toEqual(none());
    expect(again.writes).toEqual([]);
  });

  it('judges a name hold left pending by a request that died, whose stream record was lost', async () => {
    const ns = 'holds';
    const api = client(allot.url, ns);
    await api.post('indexpools', indexPool('w', ['1..3']));
    await drain();
    // What a pre-provision of an object named w-2 (value 2 of pool w) leaves when it dies after its first
    // write: a pending hold, past its deadline, and no object.
    const key = allocationKey({ namespace: ns, kind: 'IndexPool', name: 'w' }, 'Index', {
      slot: 2n,
      family: undefined,
    });
    const hold: NameHoldRecord = {
      t: 'hold',
      kind: 'Index',
      metadata: { name: 'w-2', namespace: ns, uid: 'died-request' },
      poolRef: { kind: 'IndexPool', name: 'w' },
      value: '2',
      target: allocationKey({ namespace: ns, kind: 'IndexPool', name: 'other' }, 'Index', {
        slot: 7n,
        family: undefined,
      }),
      state: 'pending',
      until: new Date(Date.now() - 1000).toISOString(),
    };
    expect(await allot.table.holds.put(key, hold)).toBe(true);
    expect(await queue.lose((r) => about(r, 'hold', 'w-2'))).toBe(1);
    const { report } = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(report.found.pendingHold).toBe(1);
    expect(report.fixed.pendingHold).toBe(1);
    expect(await allot.table.get(key)).toBeUndefined();
    const again = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(again.report.found).toEqual(none());
    expect(again.writes).toEqual([]);
  });

  it('finds an object of a pool that does not exist bound to a released claim (its REMOVE lost)', async () => {
    // An object may be made before its pool, and a claim for that pool binds it when offered; no pool's
    // walk comes by its objects, so the sweep looks for pools named in the allocations index too.
    const ns = 'poolless';
    const api = client(allot.url, ns);
    const preProvisioned = {
      apiVersion: 'pool.networking.metal.ironcore.dev/v1alpha1',
      kind: 'Index',
      metadata: {
        name: 'early-3',
        annotations: { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' },
      },
      spec: {
        poolRef: {
          apiVersion: 'pool.networking.metal.ironcore.dev/v1alpha1',
          kind: 'IndexPool',
          name: 'early',
        },
        index: 3,
        claimRef: { name: 'c' },
      },
    };
    expect((await api.post('indices', preProvisioned)).status).toBe(201);
    await api.post('claims', claim('c', { kind: 'IndexPool', name: 'early' }));
    await drain();
    expect((await api.get('indices/early-3')).body.spec.claimRef.uid).toBeTruthy();
    await api.delete('claims/c');
    expect(await queue.lose((r) => r.eventName === 'REMOVE')).toBeGreaterThan(0);
    const { report } = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(report.found.orphanedAllocation).toBe(1);
    expect(report.fixed.orphanedAllocation).toBe(1);
    await drain();
    // A user's object keeps its value; the uid that names no claim is cleared.
    expect((await api.get('indices/early-3')).body.spec.claimRef).toEqual({ name: 'c', uid: '' });
    expect(await violations(ns, [])).toEqual([]);
    const again = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(again.report.found).toEqual(none());
    expect(again.writes).toEqual([]);
  });

  it('leaves an orphan younger than the grace period, and a dry run changes nothing', async () => {
    const ns = 'young';
    const api = client(allot.url, ns);
    await api.post('indexpools', indexPool('p', ['1..5']));
    await api.post('claims', claim('c', { kind: 'IndexPool', name: 'p' }));
    await drain();
    await api.delete('claims/c');
    await queue.lose((r) => r.eventName === 'REMOVE');
    const young = await recordedSweep(ns);
    expect(young.report.found.orphanedAllocation).toBe(0);
    expect(young.writes).toEqual([]);
    const dry = await recordedSweep(ns, { graceMs: 0, dryRun: true });
    expect(dry.report.found.orphanedAllocation).toBe(1);
    expect(dry.report.fixed).toEqual(none());
    expect(dry.writes).toEqual([]);
    const real = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(real.report.fixed.orphanedAllocation).toBe(1);
    await drain();
    expect(await violations(ns, ['p'])).toEqual([]);
  });

  it(
    'sweeps a namespace over several runs within a small budget, resuming from its cursor',
    { timeout: 120_000 },
    async () => {
      const ns = 'large';
      const api = client(allot.url, ns);
      await api.post('indexpools', indexPool('big', ['1..400']));
      await api.post('indexpools', indexPool('other', ['1..50']));
      await Promise.all(
        Array.from({ length: 4 }, async (_, worker) => {
          for (let i = worker; i < 160; i += 4)
            await api.post('claims', claim(`c${i}`, { kind: 'IndexPool', name: i % 2 ? 'big' : 'other' }));
        }),
      );
      await drain();
      // One lost release near the end of the walk, so only a sweep that gets there finds it.
      await api.delete('claims/c159');
      await queue.lose((r) => r.eventName === 'REMOVE');
      const reports: RepairReport[] = [];
      for (let run = 0; run < 50; run++) {
        const { report, writes } = await recordedSweep(ns, { budget: 40, graceMs: 0, recheckMs: 0 });
        reports.push(report);
        const cursor = await allot.table.get(repairCursorKey(ns));
        if (report.complete) {
          expect(cursor).toBeUndefined();
          break;
        }
        expect(cursor).toBeDefined();
        expect(writes.length).toBeGreaterThan(0);
      }
      expect(reports.length).toBeGreaterThan(2);
      // A run also stops at its deadline (a Lambda's), whatever is left of its budget, keeping its cursor.
      const late = await recordedSweep(ns, { stopBy: Date.now() - 1, restart: true });
      expect(late.report.complete).toBe(false);
      expect(await allot.table.get(repairCursorKey(ns))).toBeDefined();
      await recordedSweep(ns, { recheckMs: 0 }); // goes on from there, to the end
      expect(reports.at(-1)!.complete).toBe(true);
      expect(Math.max(...reports.map((report) => report.requests))).toBeLessThan(40 + 120);
      expect(reports.reduce((sum, report) => sum + report.fixed.orphanedAllocation, 0)).toBe(1);
      await drain();
      expect(await violations(ns, ['big', 'other'])).toEqual([]);
    },
  );

  it('ends a run when its signal aborts (the local server stopping), even in its pause before a recheck', async () => {
    const ns = 'stopping';
    const api = client(allot.url, ns);
    await api.post('indexpools', indexPool('p', ['1..20']));
    await drain();
    for (let i = 0; i < 3; i++) await api.post('claims', claim(`c${i}`, { kind: 'IndexPool', name: 'p' }));
    // Not drained: the pool's summaries and counts lag its objects, so a run looks, then waits (here far
    // longer than the test may run) to look again.
    const stopping = new AbortController();
    const sdk = faultyClient(allot.store.endpoint, new Faults(random));
    const run = sweepNamespace({ table: new Table({ tableName: allot.table.tableName, client: sdk }) }, ns, {
      graceMs: 0,
      recheckMs: 3_600_000,
      signal: stopping.signal,
    });
    // Once it has looked and waits in its pause (the one listener on its signal), the abort comes.
    await eventually(async () => expect(getEventListeners(stopping.signal, 'abort')).toHaveLength(1));
    stopping.abort();
    const report = await run;
    sdk.destroy();
    // Cut short as a spent budget is: it keeps its cursor, and the next run goes on from it to the end.
    expect(report.complete).toBe(false);
    expect(await allot.table.get(repairCursorKey(ns))).toBeDefined();
    await drain();
    expect((await recordedSweep(ns, { recheckMs: 0 })).report.complete).toBe(true);
    expect(await violations(ns, ['p'])).toEqual([]);
  });

  it('lists the group of a bit it set whose write landed but whose answer was lost', async () => {
    const ns = 'bit-answer-lost';
    const api = client(allot.url, ns);
    await api.post('indexpools', indexPool('p', ['1..3']));
    await drain();
    await api.post('indices', {
      apiVersion: 'pool.networking.metal.ironcore.dev/v1alpha1',
      kind: 'Index',
      metadata: { name: 'p-1' },
      spec: { poolRef: { kind: 'IndexPool', name: 'p' }, index: 1 },
    });
    // The object's record is lost, so its bit and its group's first listing are the sweep's to make.
    expect(await queue.lose((r) => about(r, 'alloc', 'p-1', 'INSERT'))).toBe(1);
    // The sweep's write of the bit lands, its answer is lost; the SDK's retry then finds the summary's
    // version moved on, and the sweep reads the bit back already set.
    const faults = new Faults(random);
    let armed = true;
    faults.plan = (operation, input) => {
      if (!armed || !WRITES.has(operation) || !JSON.stringify(input).includes('#G0"')) return undefined;
      armed = false;
      return 'lostAnswer';
    };
    const sdk = faultyClient(allot.store.endpoint, faults);
    const table = new Table({ tableName: allot.table.tableName, client: sdk });
    const report = await sweepNamespace({ table }, ns, { graceMs: 0, recheckMs: 0 });
    sdk.destroy();
    expect(armed, 'no summary write was made').toBe(false);
    expect(report.found.summaryBit).toBe(1);
    await drain();
    expect((await api.get('indexpools/p')).body.status).toMatchObject({ allocated: 1, free: '2' });
    expect(await violations(ns, ['p'])).toEqual([]);
  });

  it('holds a value back when the REMOVE of its object in a pool that quarantines was lost', async () => {
    const ns = 'quarantined';
    const api = client(allot.url, ns);
    await api.post('indexpools', indexPool('q', ['1..3'], { quarantineSeconds: 600 }));
    await api.post('indices', {
      apiVersion: 'pool.networking.metal.ironcore.dev/v1alpha1',
      kind: 'Index',
      metadata: { name: 'q-2' },
      spec: { poolRef: { kind: 'IndexPool', name: 'q' }, index: 2 },
    });
    await drain();
    expect((await api.delete('indices/q-2')).status).toBe(200);
    expect(await queue.lose((r) => r.eventName === 'REMOVE')).toBe(1);
    const { report } = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(report.found.summaryBit).toBe(1);
    expect(report.fixed.summaryBit).toBe(1);
    const key = allocationKey({ namespace: ns, kind: 'IndexPool', name: 'q' }, 'Index', {
      slot: 2n,
      family: undefined,
    });
    expect(await allot.table.get<{ t: string; value: string }>(key)).toMatchObject({
      t: 'quarantine',
      value: '2',
    });
    await drain();
    expect((await api.get('indexpools/q')).body.status).toMatchObject({ free: '2', quarantined: '1' });
    const again = await recordedSweep(ns, { graceMs: 0, recheckMs: 0 });
    expect(again.report.found).toEqual(none());
  });
});
