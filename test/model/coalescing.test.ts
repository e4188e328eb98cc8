/**
 * Coalescing (issue 23): the stream function works on a batch's records of one item together, as the
 * item's lives (lib/service/stream/records.ts), and on different items side by side. The property: a
 * stream holding several changes of each key ends the table in the same state, however it is split into
 * batches (any sizes, a key's changes in one batch or spread over several, several batches in flight),
 * and whatever retries and duplicates come with it, as when every record is handed over alone, in commit
 * order.
 *
 * One run: random operations through one handler instance with the stream held back (so each key gathers
 * changes: a claim made, released and made again; an object put, deleted and put again; a pool whose
 * ranges change), then the table copied into a second table; the first gets the records one at a time,
 * the second the same records (the same ids) in random batches with faults, and each its own writes'
 * records likewise. Then the two tables, by key, without what differs run to run (uids of what the stream
 * created, times, revisions), must be equal, and the second must keep every invariant.
 */
import '../helpers/quiet.ts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { AllotStore } from '../../lib/local/stores.ts';
import { STREAM_MAPPING } from '../../lib/cloud/stream-mapping.ts';
import { Table } from '../../lib/store/table.ts';
import { startTestStore } from '../helpers/allot.ts';
import { recordFigure } from '../helpers/figures.ts';
import { propertyRuns } from '../helpers/property-runs.ts';
import { drainedViolations } from './invariants.ts';
import { World } from './world.ts';

const CLAIMS = ['c0', 'c1', 'c2'];
const POOLS = [
  { name: 'p', reclaimPolicy: 'Recycle' },
  { name: 'r', reclaimPolicy: 'Retain' },
] as const;

type Op =
  | { type: 'claim'; name: string; pool: number }
  | { type: 'release'; name: string }
  | { type: 'object'; pool: number; value: number; claim: string }
  | { type: 'unobject'; pool: number; value: number }
  | { type: 'ranges'; pool: number; last: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('claim' as const),
      name: fc.constantFrom(...CLAIMS),
      pool: fc.integer({ min: 0, max: 1 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ type: fc.constant('release' as const), name: fc.constantFrom(...CLAIMS) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('object' as const),
      pool: fc.integer({ min: 0, max: 1 }),
      value: fc.integer({ min: 0, max: 3 }),
      claim: fc.constantFrom(...CLAIMS, 'c9'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('unobject' as const),
      pool: fc.integer({ min: 0, max: 1 }),
      value: fc.integer({ min: 0, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('ranges' as const),
      pool: fc.integer({ min: 0, max: 1 }),
      last: fc.integer({ min: 15, max: 25 }),
    }),
  },
);

/** How the second table's stream is delivered, step by step until it drains. */
const deliveryArb = fc.array(
  fc.record({
    size: fc.integer({ min: 1, max: 12 }),
    concurrent: fc.integer({ min: 1, max: STREAM_MAPPING.parallelizationFactor }),
    duplicate: fc.boolean(),
    /** The function dies before this many of its DynamoDB calls (the batch is delivered again). */
    dieBefore: fc.option(fc.integer({ min: 1, max: 12 }), { freq: 3, nil: undefined }),
    replay: fc.boolean(),
  }),
  { minLength: 1, maxLength: 12 },
);

let store: AllotStore;
const figures = { runs: 0, operations: 0, records: 0, coalescedKeys: 0, deaths: 0, differences: 0 };

beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => {
  recordFigure('coalescing', figures);
  await store.close();
});

async function operate(world: World, op: Op): Promise<void> {
  const api = world.instances[0]!;
  const pool =
    POOLS[
      op.type === 'claim' || op.type === 'object' || op.type === 'unobject' || op.type === 'ranges'
        ? op.pool
        : 0
    ]!;
  switch (op.type) {
    case 'claim':
      await api.call('PUT', `claims/${op.name}`, {
        metadata: { name: op.name },
        spec: { poolRef: { kind: 'IndexPool', name: pool.name } },
      });
      return;
    case 'release':
      await api.call('DELETE', `claims/${op.name}`);
      return;
    case 'object':
      await api.call('PUT', `indices/${pool.name}-${op.value}`, {
        spec: {
          poolRef: { kind: 'IndexPool', name: pool.name },
          index: op.value,
          claimRef: { name: op.claim },
        },
      });
      return;
    case 'unobject':
      await api.call('DELETE', `indices/${pool.name}-${op.value}`);
      return;
    case 'ranges':
      await api.call('PUT', `indexpools/${pool.name}`, {
        spec: { ranges: [`0..${op.last}`], reclaimPolicy: pool.reclaimPolicy },
      });
  }
}

async function scan(table: Table): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.doc.send(
      new ScanCommand({ TableName: table.tableName, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * The table by key, without what may differ from run to run: times, revisions, the uids and values of
 * objects the stream itself made while delivering (a claim whose object a user deleted allocates again,
 * and which value it gets may depend on whether the stream has yet counted the one freed: api.md lets a
 * value freed a moment ago be passed over). Such an object is named for its claim; a summary is compared
 * by whether its bits are exactly the values its objects and holds take, and the markers it carries that
 * the counts do not hold;
 * one with no bit and no marker is as good as none (an object counted and then uncounted leaves it so), and
 * the directory that lists summaries is left out.
 */
function normalized(items: Record<string, any>[], initial: ReadonlySet<string>): Record<string, unknown> {
  const keyText = (key: Record<string, any>) => `${key.pk}|${key.sk}`;
  const made = new Map<string, string>();
  for (const item of items)
    if (item.t === 'alloc' && item.origin === 'claim' && !initial.has(item.metadata.uid))
      made.set(keyText(item), `made for ${item.spec.claimRef?.name}`);
  const named = (key: { pk: string; sk: string } | undefined) =>
    key === undefined ? undefined : (made.get(keyText(key)) ?? keyText(key));
  const taken = new Map<string, Set<number>>();
  for (const item of items)
    if (item.t === 'alloc' || item.t === 'hold') {
      const pool = item.t === 'alloc' ? item.spec.poolRef.name : item.poolRef.name;
      const set = taken.get(pool) ?? new Set<number>();
      set.add(Number(item.value));
      taken.set(pool, set);
    }
  const out: Record<string, unknown> = {};
  for (const item of items) {
    const key = made.get(keyText(item)) ?? keyText(item);
    if (item.t === 'pool') {
      const { allocated, held, available } = item.counts ?? {};
      out[key] = {
        spec: item.spec,
        generation: item.metadata.generation,
        counts: { allocated, held, available },
      };
    } else if (item.t === 'claim') {
      const bound = named(item.bound);
      out[key] = {
        uid: item.metadata.uid,
        phase: item.phase,
        reason: item.status?.conditions?.[0]?.reason,
        bound,
        ...(bound?.startsWith('made for') ? {} : { value: item.status?.value }),
      };
    } else if (item.t === 'stub') out[key] = { stub: true };
    else if (item.t === 'alloc')
      out[key] = {
        claimRef: item.spec.claimRef,
        origin: item.origin,
        ...(made.has(keyText(item)) ? {} : { value: item.value, name: item.metadata.name }),
      };
    else if (item.t === 'hold') out[key] = { hold: item.state, uid: item.metadata.uid };
    else if (item.sk === '~') {
      // IndexPools here: a slot is its value; the pool's name is the key's fourth part.
      const pool = String(item.pk).split('#')[3]!;
      const group = BigInt(`0x${String(item.pk).split('#G')[1]}`) << 12n;
      const bits = item.b instanceof Uint8Array ? item.b : new Uint8Array();
      const set = new Set<number>();
      bits.forEach((byte: number, i: number) => {
        for (let bit = 0; bit < 8; bit++) if ((byte >> bit) & 1) set.add(Number(group) + i * 8 + bit);
      });
      const expected = [...(taken.get(pool) ?? [])].filter((v) => BigInt(v) >> 12n === group >> 12n);
      const exact = set.size === expected.length && expected.every((v) => set.has(v));
      // A marker the counts hold is counted, and stays until the group's next write: only one they do
      // not hold says something (a count still to come).
      const applied = items.find((other) => other.t === 'pool' && other.metadata.name === pool)?.counts
        ?.applied;
      const markers = Object.keys(item).filter(
        (name) => name.startsWith('q_') && applied?.[name.slice(2)] === undefined,
      ).length;
      if (set.size > 0 || markers > 0 || !exact) out[key] = { bitsAreItsValues: exact, markers };
    } else if (!String(item.pk).startsWith('D#')) out[key] = { other: item.t ?? String(item.pk).slice(0, 2) };
  }
  return out;
}

/** The first table: every record alone, in commit order (its own writes' records after them, in order). */
async function oneAtATime(world: World): Promise<void> {
  const queue = world.queue;
  for (let rounds = 0; rounds < 10_000; rounds++) {
    await queue.caughtUp();
    const record = queue.pending.shift();
    if (!record) return;
    const response = await world.streamHandler({ Records: [record] });
    if (response.batchItemFailures.length > 0) throw new Error('a record failed on its own, without faults');
  }
  throw new Error('the stream does not drain');
}

async function copyTable(from: Table, to: Table): Promise<Record<string, any>[]> {
  const items = await scan(from);
  for (let start = 0; start < items.length; start += 25) {
    let requests: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> | undefined = {
      [to.tableName]: items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })),
    };
    while (requests && Object.keys(requests).length > 0) {
      const result = await to.doc.send(new BatchWriteCommand({ RequestItems: requests }));
      requests = result.UnprocessedItems as typeof requests;
    }
  }
  return items;
}

/** Keys with more than one record among the records. */
function coalescible(records: readonly DynamoDBRecord[]): number {
  const counts = new Map<string, number>();
  for (const record of records) {
    const key = JSON.stringify(record.dynamodb?.Keys);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.values()].filter((n) => n > 1).length;
}

describe('coalescing a key’s records', () => {
  it('ends a stream, split any way into batches with retries and duplicates, where one record at a time ends it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 4, maxLength: 24 }),
        deliveryArb,
        fc.integer({ min: 1, max: 2 ** 30 }),
        async (ops, delivery, seed) => {
          const reference = await World.create(store, seed, 1);
          const batched = await World.create(store, seed, 1);
          const client = store.client();
          const tables = [reference, batched].map(
            (world) => new Table({ tableName: world.tableName, client }),
          );
          try {
            const api = reference.instances[0]!;
            for (const pool of POOLS)
              await api.call('PUT', `indexpools/${pool.name}`, {
                spec: { ranges: ['0..19'], reclaimPolicy: pool.reclaimPolicy },
              });
            for (const op of ops) await operate(reference, op);
            // The same table and the same records for the second world (its copy's own records dropped).
            // Objects by uid: one the stream makes may take the key of one that went.
            const initial = new Set(
              (await copyTable(tables[0]!, tables[1]!)).flatMap((item) =>
                item.t === 'alloc' ? [item.metadata.uid as string] : [],
              ),
            );

            await reference.queue.caughtUp();
            const records = [...reference.queue.pending];
            await batched.queue.lose(() => true);
            batched.queue.lost = 0;
            batched.queue.pending.push(...records);
            // Its own records get ids of their own (a stream's ids never repeat; the counts key on them).
            batched.queue.numberAfter(records.length + 10_000);

            await oneAtATime(reference);
            for (let step = 0; batched.queue.pending.length > 0; step++) {
              if (step > 5000) throw new Error('the batched stream does not drain');
              // The plan once with its faults, then again and again without, until the stream drains.
              const how = delivery[step % delivery.length]!;
              const faulty = step < delivery.length;
              if (how.replay && faulty) await batched.queue.replay(batched.streamHandler, batched.random);
              if (how.dieBefore !== undefined && faulty) batched.streamFaults.dieBeforeCall(how.dieBefore);
              await batched.queue.deliver(batched.streamHandler, how.size, batched.random, how);
              if (batched.streamFaults.revive()) figures.deaths++;
              await batched.queue.caughtUp();
            }
            const expected = normalized(await scan(tables[0]!), initial);
            const got = normalized(await scan(tables[1]!), initial);
            const violations = await drainedViolations(batched, await batched.snapshot());
            figures.runs++;
            figures.operations += ops.length;
            figures.records += records.length;
            figures.coalescedKeys += coalescible(records);
            if (JSON.stringify(expected) !== JSON.stringify(got)) figures.differences++;
            expect(got).toEqual(expected);
            expect(violations).toEqual([]);
          } finally {
            client.destroy();
            await reference.close();
            await batched.close();
          }
        },
      ),
      propertyRuns('coalescing', { prefix: 'COALESCING', numRuns: 15 }),
    );
  }, 600_000);
});
