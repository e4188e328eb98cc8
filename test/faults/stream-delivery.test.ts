/**
 * Stream delivery faults (issue 5, part 3), beyond test/integration/stream.test.ts's single cases: the
 * stream function fed by a hand-delivered stream that duplicates records, replays whole batches long
 * after, bisects a batch that failed half way, and delivers records of different keys in any order, while
 * claims are released and recreated under the same names. Counts stay exact; a recreated claim's
 * allocation is never touched by its predecessor's REMOVE.
 */
import '../helpers/quiet.ts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AllotStore } from '../../lib/local/stores.ts';
import { startTestStore } from '../helpers/allot.ts';
import { recordFigure } from '../helpers/figures.ts';
import { drainedViolations } from '../model/invariants.ts';
import { World } from '../model/world.ts';
import { HandlerDiedError } from '../helpers/faults.ts';
import { WAITING_INDEX } from '../../lib/store/schema.ts';
import { createStreamHandler } from '../../functions/stream.ts';
import { Table } from '../../lib/store/table.ts';

let store: AllotStore;
const figures = { runs: 0, records: 0, duplicated: 0, replayed: 0, bisected: 0, violations: 0 };

beforeAll(async () => {
  store = await startTestStore();
});
afterAll(async () => {
  recordFigure('stream delivery faults', figures);
  await store.close();
});

const claimBody = (name: string, pool: string) => ({
  metadata: { name },
  spec: { poolRef: { kind: 'IndexPool', name: pool } },
});

async function createPools(world: World) {
  const api = world.instances[0]!;
  expect((await api.call('PUT', 'indexpools/recycled', { spec: { ranges: ['1..4'] } })).status).toBe(201);
  const retained = { spec: { ranges: ['1..4'], reclaimPolicy: 'Retain' } };
  expect((await api.call('PUT', 'indexpools/retained', retained)).status).toBe(201);
}

type Delivery =
  | { type: 'deliver'; size: number; duplicate: boolean }
  | { type: 'replay' }
  | { type: 'bisect'; size: number; dieBefore: number };

type Step = { type: 'claim' | 'release'; name: string; pool: 'recycled' | 'retained' } | Delivery;

async function deliver(world: World, delivery: Delivery) {
  const { queue, streamHandler, random } = world;
  if (delivery.type === 'replay') return queue.replay(streamHandler, random);
  if (delivery.type === 'deliver')
    return queue.deliver(streamHandler, delivery.size, random, { duplicate: delivery.duplicate });
  // The function fails half way through the batch (its effects so far stay); the event source mapping
  // then retries the batch as two halves.
  world.streamFaults.dieBeforeCall(delivery.dieBefore);
  await queue.deliver(streamHandler, delivery.size, random);
  world.streamFaults.revive();
  figures.bisected++;
  const half = Math.max(1, Math.ceil(delivery.size / 2));
  await queue.deliver(streamHandler, half, random);
  await queue.deliver(streamHandler, half, random);
}

async function finish(world: World): Promise<string[]> {
  await world.queue.drain(world.streamHandler, world.random);
  // Every batch delivered so far, again, in reverse: the stalest records last.
  for (const batch of [...world.queue.delivered].reverse()) await world.streamHandler({ Records: batch });
  figures.replayed += world.queue.delivered.flat().length;
  await world.queue.drain(world.streamHandler, world.random);
  return drainedViolations(world, await world.snapshot());
}

describe('stream delivery faults', () => {
  it('never lets a stale REMOVE touch the allocation of a claim recreated under the same name', async () => {
    const world = await World.create(store, 7, 1);
    try {
      await createPools(world);
      const api = world.instances[0]!;
      const held: Record<string, string> = {};
      for (const pool of ['recycled', 'retained']) {
        for (let round = 0; round < 3; round++) {
          const name = `web-${pool}`;
          if (round > 0) expect((await api.call('DELETE', `claims/${name}`)).status).toBe(200);
          const created = await api.call('POST', 'claims', claimBody(name, pool));
          expect(created.status).toBe(201);
          held[name] = created.body.status.value;
          // Some rounds' records are delivered (and duplicated) at once, the rest only at the end.
          if (round === 1)
            await world.queue.deliver(world.streamHandler, 100, world.random, { duplicate: true });
        }
      }
      expect(await finish(world)).toEqual([]);
      for (const [name, value] of Object.entries(held)) {
        const answer = await api.call('GET', `claims/${name}`);
        expect(answer.body.status.value).toBe(value);
        const allocation = await api.call('GET', `indices/${answer.body.status.allocationRef.name}`);
        expect(allocation.body.spec.claimRef).toEqual({ name, uid: answer.body.metadata.uid });
      }
      const recycled = await world.observe('indexpools/recycled');
      expect(recycled.body.status).toMatchObject({ allocated: 1, total: '4', free: '3' });
      // Retain keeps the two released values (uid cleared) and the held one.
      const retained = await world.observe('indexpools/retained');
      expect(retained.body.status).toMatchObject({ allocated: 3, total: '4', free: '1' });
    } finally {
      await world.close();
    }
  });

  it('keeps counts exact and claims intact under duplicates, replays, bisected batches and reordering', async () => {
    const name = fc.constantFrom('a', 'b', 'c', 'd');
    const pool = fc.constantFrom('recycled' as const, 'retained' as const);
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ type: fc.constantFrom('claim' as const, 'release' as const), name, pool }),
      fc.record({
        type: fc.constant('deliver' as const),
        size: fc.integer({ min: 1, max: 8 }),
        duplicate: fc.boolean(),
      }),
      fc.record({ type: fc.constant('replay' as const) }),
      fc.record({
        type: fc.constant('bisect' as const),
        size: fc.integer({ min: 2, max: 8 }),
        dieBefore: fc.integer({ min: 1, max: 10 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 5, maxLength: 30 }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        async (steps, seed) => {
          const world = await World.create(store, seed, 1);
          try {
            await createPools(world);
            const api = world.instances[0]!;
            const told = new Map<string, { uid: string; value?: string }>();
            for (const s of steps) {
              if (s.type === 'claim') {
                const answer = await api.call('PUT', `claims/${s.name}`, claimBody(s.name, s.pool));
                if (answer.status < 300)
                  told.set(s.name, { uid: answer.body.metadata.uid, value: answer.body.status.value });
              } else if (s.type === 'release') {
                await api.call('DELETE', `claims/${s.name}`);
                told.delete(s.name);
              } else await deliver(world, s as Delivery);
            }
            const violations = await finish(world);
            for (const [claimName, { uid, value }] of told) {
              const answer = await api.call('GET', `claims/${claimName}`);
              if (answer.body.metadata?.uid !== uid) violations.push(`claim ${claimName} was lost`);
              else if (value !== undefined && answer.body.status.value !== value)
                violations.push(
                  `claim ${claimName} was told ${value}, now holds ${answer.body.status.value}`,
                );
            }
            figures.runs++;
            figures.records += world.queue.recordsDelivered;
            figures.duplicated += world.queue.duplicates;
            figures.replayed += world.queue.replays;
            figures.violations += violations.length;
            expect(violations).toEqual([]);
          } finally {
            await world.close();
          }
        },
      ),
      { numRuns: 25 },
    );
    // 25 worlds: about 5 s on dynalite and 15 s on DynamoDB Local alone, twice that beside the rest of
    // the suite (a budget, not a measure).
  }, 120_000);

  it("counts an object whose batch found no pool, when the pool's first recount ran before its write", async () => {
    // Two batches in flight at once (of one shard, or of two): an object's INSERT, made before its pool,
    // and the pool's INSERT. The object's batch reads (no pool yet) and waits at its first write; the
    // pool is made and its batch recounts; then the object's batch writes the bit and marker. Its counts
    // step must read the pool again, as the recount it would leave the marker to has passed.
    const world = await World.create(store, 13, 1);
    const paused = pausedWrites();
    const objectBatch = createStreamHandler({
      table: new Table({ tableName: world.tableName, client: paused.client }),
    });
    try {
      const api = world.instances[0]!;
      const object = { spec: { poolRef: { kind: 'IndexPool', name: 'late' }, index: 7 } };
      expect((await api.call('PUT', 'indices/late-7', object)).status).toBe(201);
      await world.queue.caughtUp();
      const first = objectBatch({ Records: world.queue.pending.splice(0) });
      await paused.waiting;

      expect((await api.call('PUT', 'indexpools/late', { spec: { ranges: ['1..10'] } })).status).toBe(201);
      await world.queue.caughtUp();
      expect(
        (await world.streamHandler({ Records: world.queue.pending.splice(0) }))?.batchItemFailures,
      ).toEqual([]);
      paused.release();
      expect((await first)?.batchItemFailures).toEqual([]);
      await world.queue.drain(world.streamHandler, world.random);

      const status = (await api.call('GET', 'indexpools/late')).body.status;
      expect({ allocated: status.allocated, free: status.free }).toEqual({ allocated: 1, free: '9' });
      expect(await drainedViolations(world, await world.snapshot())).toEqual([]);
    } finally {
      paused.client.destroy();
      await world.close();
    }
  });
});

describe('a pool of a range of prefix lengths', () => {
  /** A world of one instance with a pool `name` of 10.0.0.0/27 handing out /28s and /29s, for `test`. */
  async function withRangedPool(
    seed: number,
    name: string,
    test: (world: World, api: World['instances'][number]) => Promise<void>,
  ) {
    const world = await World.create(store, seed, 1);
    try {
      const api = world.instances[0]!;
      const pool = {
        spec: { prefixes: ['10.0.0.0/27'], allocationPrefixLengths: { min: 28, max: 29, default: 28 } },
      };
      expect((await api.call('PUT', `ipprefixpools/${name}`, pool)).status).toBe(201);
      await test(world, api);
    } finally {
      await world.close();
    }
  }

  it("wakes a claim waiting for a prefix whose object's INSERT and REMOVE reach the stream in one batch", () =>
    // The object's INSERT is held back until its claim is released and the reclaim has deleted it: the
    // batch that gets both coalesces them into no change of the summaries, and must wake the waiting
    // claim all the same (it waits beside the one free prefix, and nothing else would wake it).
    withRangedPool(17, 'late', async (world, api) => {
      const ref = { kind: 'IPPrefixPool', name: 'late' };
      const claimOf = (name: string, extra = {}) => ({
        metadata: { name },
        spec: { poolRef: ref, ...extra },
      });
      expect(
        (await api.call('PUT', 'claims/other', claimOf('other', { value: '10.0.0.16/28' }))).status,
      ).toBe(201);
      await world.queue.drain(world.streamHandler, world.random);

      expect((await api.call('PUT', 'claims/first', claimOf('first'))).body.status.value).toBe('10.0.0.0/28');
      const waiting = await api.call('PUT', 'claims/waiting', claimOf('waiting'));
      expect(waiting.body.status.value).toBeUndefined();
      const isObjectInsert = (record: {
        eventName?: string;
        dynamodb?: { NewImage?: Record<string, any> };
      }) => record.eventName === 'INSERT' && record.dynamodb?.NewImage?.t?.S === 'alloc';
      const deliverAllBut = async (held: (record: any) => boolean) => {
        await world.queue.caughtUp();
        const ready = world.queue.pending.filter((record) => !held(record));
        world.queue.pending.splice(0, world.queue.pending.length, ...world.queue.pending.filter(held));
        expect((await world.streamHandler({ Records: ready }))?.batchItemFailures).toEqual([]);
      };
      await deliverAllBut(isObjectInsert);
      expect((await api.call('GET', 'claims/waiting')).body.status.value).toBeUndefined();

      expect((await api.call('DELETE', 'claims/first')).status).toBe(200);
      await deliverAllBut(isObjectInsert); // the reclaim deletes the object
      await world.queue.caughtUp();
      const both = world.queue.pending.splice(0);
      expect(both.map((record) => record.eventName)).toEqual(['INSERT', 'REMOVE']);
      expect((await world.streamHandler({ Records: both }))?.batchItemFailures).toEqual([]);
      await world.queue.drain(world.streamHandler, world.random);

      expect((await api.call('GET', 'claims/waiting')).body.status.value).toBe('10.0.0.0/28');
      const status = (await api.call('GET', 'ipprefixpools/late')).body.status;
      expect({ allocated: status.allocated, free: status.free }).toEqual({ allocated: 2, free: '0' });
    }));

  it("wakes a claim waiting for a held prefix when the batch of the hold's going is delivered again", () =>
    // The batch that applies the hold's going counts it, then dies before it wakes the waiting claims.
    // Delivered again, it finds its marker counted already: the wake must not depend on counting it.
    withRangedPool(23, 'kept', async (world, api) => {
      const holders = { spec: { prefixes: ['192.168.0.0/16'], allocationPrefixLength: 24 } };
      expect((await api.call('PUT', 'ipprefixpools/holders', holders)).status).toBe(201);
      // Its name holds 10.0.0.0/28 of pool kept (held-names.test.ts).
      const holder = {
        metadata: { name: 'kept-10-0-0-0-28' },
        spec: { poolRef: { kind: 'IPPrefixPool', name: 'holders' }, prefix: '192.168.1.0/24' },
      };
      expect((await api.call('PUT', 'ipprefixes/kept-10-0-0-0-28', holder)).status).toBe(201);
      await world.queue.drain(world.streamHandler, world.random);
      const exact = { spec: { poolRef: { kind: 'IPPrefixPool', name: 'kept' }, value: '10.0.0.0/28' } };
      const waiting = await api.call('PUT', 'claims/exact', exact);
      expect(waiting.body.status.conditions[0].reason).toBe('ValueTaken');
      await world.queue.drain(world.streamHandler, world.random);

      expect((await api.call('DELETE', 'ipprefixes/kept-10-0-0-0-28')).status).toBe(200);
      let died = 0;
      world.streamFaults.beforeCall = (operation, input) => {
        const ofKept = JSON.stringify(input.ExpressionAttributeValues ?? {}).includes('#kept');
        if (operation === 'Query' && input.IndexName === WAITING_INDEX && ofKept && died++ === 0)
          throw new HandlerDiedError('the function died before it woke the waiting claims');
      };
      await world.queue.drain(world.streamHandler, world.random);
      world.streamFaults.beforeCall = undefined;
      expect(died, 'no wake was tried').toBeGreaterThan(0);
      expect((await api.call('GET', 'claims/exact')).body.status.value).toBe('10.0.0.0/28');
    }));
});

/** A client of the store whose first write waits until released (`waiting`: it has reached that write). */
function pausedWrites() {
  let reached!: () => void;
  let release!: () => void;
  const waiting = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const client = store.client();
  let first = true;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (first && /^(Put|Update|Delete)ItemCommand$/.test(context.commandName ?? '')) {
        first = false;
        reached();
        await released;
      }
      return next(args);
    },
    { step: 'initialize', name: 'pausedWrites' },
  );
  return { client, waiting, release };
}
