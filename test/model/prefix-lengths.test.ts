/**
 * Prefixes of any length never overlap (issue 15): a targeted race and a model run.
 *
 * - The race: many concurrent claims of lengths /20../28 in one /16, from independent handler
 *   instances, with the stream delivered while they run: the prefixes handed out are disjoint and their
 *   sizes add up to at most the /16.
 * - The model: independent instances run random steps on one pool of a range of lengths (claims of
 *   every allowed length, a specific `value` of any length, releases, a user's pre-provisioned prefix of
 *   any length, the stream in random partial batches), with SDK faults and handlers that die between
 *   any two of their calls. After every step no two *kept* objects overlap (a claim's object its
 *   Allocated claim holds, a user's confirmed object) and every Allocated claim's object exists and holds
 *   its value; after the stream drains, no two objects of the pool overlap at all, no object is left
 *   unchecked, and the pool's counts equal a brute-force recount in /max prefixes. A pool carved from
 *   claim "a" runs alongside: "a" is never released while it exists (409 ClaimInUse), and after the
 *   drain its prefixes are a's value and its objects lie inside it. Objects of another pool named for
 *   a prefix of the pool (`region-10-0-4-0-22`, a name hold) come and go: no kept object overlaps a
 *   prefix a confirmed hold holds, and held prefixes are not free. With faults, stream records are also
 *   lost for good and the repair sweep runs now and then, and until it finds nothing after the drain.
 */
import '../helpers/quiet.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AllotStore } from '../../lib/local/stores.ts';
import { startTestStore } from '../helpers/allot.ts';
import { seededRandom } from '../helpers/faults.ts';
import { recordFigure } from '../helpers/figures.ts';
import { STREAM_MAPPING } from '../../lib/cloud/stream-mapping.ts';
import { Clock, World, type Answer, type Item } from './world.ts';

const POOL = 'region';
const MIN = 20;
const MAX = 28;
const SPEC = { prefixes: ['10.0.0.0/16'], allocationPrefixLengths: { min: MIN, max: MAX, default: 24 } };
const BASE = 10 * 2 ** 24;

function range(prefix: string): [number, number] {
  const [address, length] = prefix.split('/');
  const n = address!.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
  return [n, n + 2 ** (32 - Number(length)) - 1];
}

function overlapping(prefixes: { value: string; who: string }[]): string[] {
  const sorted = prefixes.map((p) => ({ ...p, r: range(p.value) })).sort((a, b) => a.r[0] - b.r[0]);
  const found: string[] = [];
  for (let i = 1; i < sorted.length; i++) {
    // Sorted by first address: an overlap shows as a start before the running end.
    for (let j = i - 1; j >= 0 && j >= i - 8; j--)
      if (sorted[j]!.r[1] >= sorted[i]!.r[0])
        found.push(
          `${sorted[j]!.value} (${sorted[j]!.who}) overlaps ${sorted[i]!.value} (${sorted[i]!.who})`,
        );
  }
  return found;
}

let store: AllotStore;
const clock = new Clock();
beforeAll(async () => {
  store = await startTestStore();
  vi.spyOn(Date, 'now').mockImplementation(clock.now);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await store.close();
});

const claimBody = (name: string, spec: Record<string, unknown>) => ({
  metadata: { name },
  spec: { poolRef: { kind: 'IPPrefixPool', name: POOL }, ...spec },
});

async function createPool(world: World): Promise<void> {
  const created = await world.instances[0]!.call('POST', `/v1/namespaces/model/ipprefixpools`, {
    metadata: { name: POOL },
    spec: SPEC,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const holders = await world.instances[0]!.call('POST', `/v1/namespaces/model/ipprefixpools`, {
    metadata: { name: HOLDERS },
    spec: { prefixes: ['192.168.0.0/24'], allocationPrefixLength: 28 },
  });
  expect(holders.status, JSON.stringify(holders.body)).toBe(201);
  await world.queue.drain(world.streamHandler, world.random);
}

describe('concurrent claims of lengths /20../28 in one /16', () => {
  it('hand out disjoint prefixes whose sizes add up to at most the /16', async () => {
    const world = await World.create(store, 7, 8);
    try {
      await createPool(world);
      const random = seededRandom(11);
      const lengths = Array.from({ length: 48 }, () => MIN + Math.floor(random() * (MAX - MIN + 1)));
      let done = 0;
      const streaming = (async () => {
        while (done < lengths.length) {
          await world.queue.deliver(world.streamHandler, 10, world.random, {});
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const answers = await Promise.all(
        lengths.map(async (prefixLength, i) => {
          const instance = world.instances[i % world.instances.length]!;
          const answer = await instance.call(
            'POST',
            '/v1/namespaces/model/claims',
            claimBody(`c${i}`, { prefixLength }),
          );
          done++;
          return answer;
        }),
      );
      await streaming;
      await world.queue.drain(world.streamHandler, world.random);
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      // A claim may answer PoolExhausted while a prefix taken back a moment ago still shows held in the
      // summary (as a freed value may be passed over); the stream's applying that removal wakes it, so
      // after the drain none waits while its length has room (checked below).
      const answeredWaiting = answers.filter((answer) => answer.body.status.value === undefined).length;
      const held = answers
        .filter((answer) => answer.body.status.value !== undefined)
        .map((answer) => ({
          value: answer.body.status.value as string,
          who: answer.body.metadata.name as string,
        }));
      expect(overlapping(held)).toEqual([]);
      const sizes = held.reduce((sum, { value }) => sum + 2 ** (32 - Number(value.split('/')[1])), 0);
      expect(sizes).toBeLessThanOrEqual(2 ** 16);
      const snapshot = await world.snapshot();
      expect(
        overlapping(snapshot.allocations.map((a) => ({ value: a.value, who: a.metadata.name }))),
      ).toEqual([]);
      // The pool has room for every one of them (at most 48 × /20 > /16, so some may wait).
      // A claim that waits finds no aligned prefix of its length free: the brute force agrees.
      const waiting = snapshot.claims.filter((claim) => claim.phase !== 'Allocated');
      const objects = snapshot.allocations.map((a) => range(a.value));
      for (const claim of waiting) {
        expect(claim.status.conditions[0].reason).toBe('PoolExhausted');
        const size = 2 ** (32 - claim.spec.prefixLength);
        for (let first = BASE; first < BASE + 2 ** 16; first += size) {
          const free = objects.every(([a, b]) => b < first || a > first + size - 1);
          expect(free, `${claim.metadata.name} waits, but a /${claim.spec.prefixLength} is free`).toBe(false);
        }
      }
      recordFigure('prefix race', {
        claims: lengths.length,
        allocated: held.length,
        answeredWaiting,
        waiting: waiting.length,
        overlaps: 0,
        usedShare: Math.round((sizes / 2 ** 16) * 1000) / 1000,
      });
    } finally {
      world.close();
    }
  }, 120_000);
});

const CLAIMS = ['a', 'b', 'c', 'd', 'e', 'f'];
/** The pool of the objects whose names hold prefixes of POOL. */
const HOLDERS = 'holders';
/** The name that holds `prefix` of POOL (service/allocation/name-holds.ts). */
const holdingName = (prefix: string) => `${POOL}-${prefix.replace(/[./]/g, '-')}`;
/** The pool carved from claim "a". */
const SUB = 'from-a';
const regionOf = (allocations: Item[]) => allocations.filter((a) => a.spec.poolRef.name === POOL);

/** An overlap of an object and a hold (two holds may overlap: both keep values from the pool). */
const objectAndHold = (found: string) => found.split('(hold ').length === 2;

/** The confirmed name holds of prefixes of POOL (a pending one may not have done its check yet). */
const heldOf = (holds: Item[]) =>
  holds.filter((h) => h.poolRef?.name === POOL && h.state === 'held' && h.kind === 'IPPrefix');

/** Whether an object is kept: its claim holds it (Allocated), or a user's object is confirmed. */
function kept(allocation: Item, claims: Item[]): boolean {
  if (allocation.origin === 'user') return allocation.unchecked === undefined;
  const claim = claims.find((c) => c.metadata.uid === allocation.spec.claimRef?.uid);
  if (!claim) return allocation.spec.claimRef?.uid === ''; // retained (not in this pool: Recycle)
  return (
    claim.phase === 'Allocated' && claim.bound?.pk === allocation.pk && claim.bound?.sk === allocation.sk
  );
}

/** A prefix of the pool, in its first 1/2^narrow (the first /18 by default: values collide often). */
function randomPrefix(random: () => number, narrow = 2): string {
  const length = MIN + Math.floor(random() * (MAX - MIN + 1));
  const span = 2 ** (32 - length);
  const room = Math.max(1, 2 ** (16 - narrow) / span);
  const n = BASE + Math.floor(random() * room) * span;
  return `${[24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.')}/${length}`;
}

/** The objects a user deleted by name in the current run (the stream then allocates their claims again). */
const deletedNames = new Set<string>();

async function step(world: World, random: () => number, faulty: boolean): Promise<(Answer | undefined)[]> {
  const count = 1 + Math.floor(random() * 4);
  // One stream batch in flight at a time, as one shard's event source mapping delivers.
  let streamed = false;
  const ops = Array.from({ length: count }, () => {
    const instance = world.instances[Math.floor(random() * world.instances.length)]!;
    const name = CLAIMS[Math.floor(random() * CLAIMS.length)]!;
    const roll = random();
    if (faulty && random() < 0.3) instance.faults.dieBeforeCall(1 + Math.floor(random() * 7));
    if (roll < 0.1) {
      const sub = `s${Math.floor(random() * 3)}`;
      const body = { metadata: { name: sub }, spec: { poolRef: { kind: 'IPPrefixPool', name: SUB } } };
      return { instance, call: () => instance.call('PUT', `/v1/namespaces/model/claims/${sub}`, body) };
    }
    if (roll < 0.4) {
      const prefixLength = MIN + Math.floor(random() * (MAX - MIN + 1));
      return {
        instance,
        call: () =>
          instance.call('PUT', `/v1/namespaces/model/claims/${name}`, claimBody(name, { prefixLength })),
      };
    }
    if (roll < 0.55)
      return {
        instance,
        call: () =>
          instance.call(
            'PUT',
            `/v1/namespaces/model/claims/${name}`,
            claimBody(name, { value: randomPrefix(random) }),
          ),
      };
    if (roll < 0.75)
      return { instance, call: () => instance.call('DELETE', `/v1/namespaces/model/claims/${name}`) };
    if (roll < 0.8 && random() < 0.5) {
      // A name that holds a prefix of the pool (few, so they come and go): its object is of HOLDERS.
      const prefix = randomPrefix(random, 4);
      const path = `/v1/namespaces/model/ipprefixes/${holdingName(prefix)}`;
      if (random() < 0.4)
        return {
          instance,
          // The name may be a claim's object's own (once the hold went): only a holder is deleted, and a
          // claim whose object a user deleted in this step is not held to its object after it.
          call: async () => {
            const found = await instance.call('GET', path);
            if (found.status !== 200 || found.body.spec.poolRef.name !== HOLDERS) return found;
            deletedNames.add(holdingName(prefix));
            return instance.call('DELETE', path);
          },
        };
      const own = `192.168.0.${16 * Math.floor(random() * 16)}/28`;
      const body = {
        metadata: { name: holdingName(prefix) },
        spec: { poolRef: { kind: 'IPPrefixPool', name: HOLDERS }, prefix: own },
      };
      return { instance, call: () => instance.call('POST', '/v1/namespaces/model/ipprefixes', body) };
    }
    if (roll < 0.9 || streamed) {
      const prefix = randomPrefix(random);
      return {
        instance,
        call: () =>
          instance.call('POST', '/v1/namespaces/model/ipprefixes', {
            metadata: { name: `user-${Math.floor(random() * 1e9)}` },
            spec: { poolRef: { kind: 'IPPrefixPool', name: POOL }, prefix },
          }),
      };
    }
    streamed = true;
    if (faulty && random() < 0.2)
      return {
        instance,
        // The scheduled sweep, on the stream function's client: one that dies just stops.
        call: async () => {
          await world.repair().catch(() => undefined);
          return undefined;
        },
      };
    const lose = faulty && random() < 0.25;
    const size = 1 + Math.floor(random() * 12);
    // Batches in flight at once, no key in two (the mapping's concurrent batches per shard).
    const concurrent = 1 + Math.floor(random() * STREAM_MAPPING.parallelizationFactor);
    return {
      instance,
      call: async () => {
        if (lose) await world.queue.lose(undefined, world.random);
        await world.queue.deliver(world.streamHandler, size, world.random, { concurrent });
        return undefined;
      },
    };
  });
  const answers = await Promise.all(ops.map((op) => op.call()));
  for (const op of ops) {
    if (op.instance.faults.revive()) {
      clock.passHandlerDeadline();
      op.instance.restart();
    }
  }
  return answers;
}

describe('the model with prefixes of mixed lengths', () => {
  const runModel = async (faulty: boolean, runs: number, steps: number) => {
    const figures = {
      runs: 0,
      steps: 0,
      operations: 0,
      objects: 0,
      violations: 0,
      died: 0,
      throttle: 0,
      timeout: 0,
      lostAnswer: 0,
      holds: 0,
      lost: 0,
      sweeps: 0,
      repairs: 0,
    };
    for (let run = Number(process.env.PREFIX_MODEL_FIRST ?? 0); run < runs; run++) {
      const world = await World.create(store, 1000 * (faulty ? 2 : 1) + run, 3);
      const random = seededRandom(run + (faulty ? 5000 : 0));
      const violations: string[] = [];
      deletedNames.clear();
      try {
        await createPool(world);
        // A pool carved from claim "a": "a" may not be released while it exists.
        const carved = await world.instances[0]!.call('POST', '/v1/namespaces/model/ipprefixpools', {
          metadata: { name: SUB },
          spec: { prefixesFrom: { claimRef: { name: 'a' } }, allocationPrefixLength: 28 },
        });
        expect(carved.status, JSON.stringify(carved.body)).toBe(201);
        let sourceSeen = false;
        if (faulty) world.setFaultRate(0.08);
        for (let s = 0; s < steps; s++) {
          const answers = await step(world, random, faulty);
          figures.operations += answers.length;
          for (const answer of answers)
            if (answer && answer.status >= 500 && !faulty)
              violations.push(`a 5xx without faults: ${JSON.stringify(answer.body)}`);
          const snapshot = await world.snapshot();
          const source = snapshot.claims.some((c) => c.metadata.name === 'a');
          if (sourceSeen && !source) violations.push('claim a was released while a pool is carved from it');
          sourceSeen ||= source;
          const keptObjects = regionOf(snapshot.allocations).filter((a) => kept(a, snapshot.claims));
          violations.push(...overlapping(keptObjects.map((a) => ({ value: a.value, who: a.metadata.name }))));
          // A confirmed hold has done its check: no kept object overlaps what it holds.
          violations.push(
            ...overlapping([
              ...keptObjects.map((a) => ({ value: a.value, who: a.metadata.name })),
              ...heldOf(snapshot.holds).map((h) => ({ value: h.value, who: `hold ${h.metadata.name}` })),
            ]).filter(objectAndHold),
          );
          for (const claim of snapshot.claims) {
            if (claim.phase !== 'Allocated') continue;
            const object = snapshot.allocations.find(
              (a) => a.pk === claim.bound?.pk && a.sk === claim.bound?.sk,
            );
            if (!object && !deletedNames.has(claim.status.allocationRef?.name))
              violations.push(`claim ${claim.metadata.name} is Allocated but its object is gone`);
            else if (!object) continue;
            else if (object.value !== claim.status.value)
              violations.push(
                `claim ${claim.metadata.name} says ${claim.status.value}, its object ${object.value}`,
              );
          }
          figures.steps++;
          if (violations.length) break;
        }
        world.setFaultRate(0);
        clock.passHandlerDeadline();
        await world.queue.drain(world.streamHandler, world.random);
        if (world.needsSweeps) {
          // Records were lost for good, or a sweep died part way: sweeps until one finds nothing (each fix may uncover the next).
          for (let sweeps = 0; sweeps < 4; sweeps++) {
            clock.passHandlerDeadline();
            clock.passHandlerDeadline();
            const report = await world.repair();
            await world.queue.drain(world.streamHandler, world.random);
            if (Object.values(report.found).every((n) => n === 0)) break;
          }
        }
        figures.lost += world.queue.lost;
        figures.sweeps += world.sweeps;
        figures.repairs += world.repairs;
        const all = await world.snapshot();
        const snapshot = { ...all, allocations: regionOf(all.allocations) };
        figures.objects += all.allocations.length;
        // The carved pool follows claim a's value; its objects lie inside it and are distinct.
        const a = all.claims.find((c) => c.metadata.name === 'a');
        const sub = (await world.observe(`/v1/namespaces/model/ipprefixpools/${SUB}`)).body;
        const expected = a?.phase === 'Allocated' ? [a.status.value] : [];
        if (JSON.stringify(sub.status.prefixes) !== JSON.stringify(expected))
          violations.push(
            `${SUB} has prefixes ${JSON.stringify(sub.status.prefixes)}, claim a holds ${JSON.stringify(expected)}`,
          );
        const subObjects = all.allocations.filter((o) => o.spec.poolRef.name === SUB);
        violations.push(...overlapping(subObjects.map((o) => ({ value: o.value, who: o.metadata.name }))));
        for (const o of subObjects) {
          const [first, last] = range(o.value);
          const [outerFirst, outerLast] = expected[0] ? range(expected[0]) : [1, 0];
          if (first < outerFirst || last > outerLast)
            violations.push(`${o.value} of ${SUB} is outside ${expected[0]}`);
        }
        violations.push(
          ...overlapping(snapshot.allocations.map((a) => ({ value: a.value, who: a.metadata.name }))),
        );
        for (const a of snapshot.allocations)
          if (a.unchecked !== undefined) violations.push(`${a.metadata.name} stays unchecked`);
        const holds = heldOf(all.holds);
        figures.holds += holds.length;
        if (all.holds.length !== holds.length) violations.push('a name hold stays pending after the drain');
        violations.push(
          ...overlapping([
            ...snapshot.allocations.map((a) => ({ value: a.value, who: a.metadata.name })),
            ...holds.map((h) => ({ value: h.value, who: `hold ${h.metadata.name}` })),
          ]).filter(objectAndHold),
        );
        // Held prefixes are not free: what waits for them waits rightly.
        const objects = [...snapshot.allocations, ...holds].map((a) => range(a.value));
        const freeOf = (first: number, size: number) =>
          objects.every(([a, b]) => b < first || a > first + size - 1);
        for (const claim of all.claims) {
          if (
            claim.phase === 'Allocated' &&
            !all.allocations.some((a) => a.pk === claim.bound?.pk && a.sk === claim.bound?.sk)
          )
            violations.push(
              `claim ${claim.metadata.name} is Allocated but its object is gone, after the drain`,
            );
        }
        for (const claim of snapshot.claims) {
          if (claim.phase === 'Allocating') violations.push(`claim ${claim.metadata.name} stays Allocating`);
          if (claim.phase !== 'Waiting' || claim.spec.poolRef.name !== POOL) continue;
          // No claim waits while what it asks for is free.
          if (claim.spec.value !== undefined) {
            const [first, last] = range(claim.spec.value);
            if (freeOf(first, last - first + 1))
              violations.push(`claim ${claim.metadata.name} waits for ${claim.spec.value}, which is free`);
            continue;
          }
          const size = 2 ** (32 - (claim.spec.prefixLength ?? 24));
          for (let first = BASE; first < BASE + 2 ** 16; first += size)
            if (freeOf(first, size)) {
              violations.push(`claim ${claim.metadata.name} waits, but a /${32 - Math.log2(size)} is free`);
              break;
            }
        }
        // The /max slots held, by objects (disjoint) or holds (which may overlap each other).
        const slots = new Set<number>();
        for (const [first, last] of objects)
          for (let address = first; address <= last; address += 2 ** (32 - MAX)) slots.add(address);
        const covered = slots.size;
        const pool = (await world.observe(`/v1/namespaces/model/ipprefixpools/${POOL}`)).body;
        if (pool.status.allocated !== snapshot.allocations.length)
          violations.push(`allocated ${pool.status.allocated}, objects ${snapshot.allocations.length}`);
        if (pool.status.free !== String(2 ** (MAX - 16) - covered))
          violations.push(`free ${pool.status.free}, a recount says ${2 ** (MAX - 16) - covered}`);
      } finally {
        for (const [kind, count] of Object.entries(world.faultsInjected())) figures[kind as 'died'] += count;
        world.close();
      }
      figures.runs++;
      figures.violations += violations.length;
      expect(violations, `run ${run}`).toEqual([]);
    }
    recordFigure(`prefix model ${faulty ? 'with' : 'without'} faults`, figures);
  };

  it('keeps kept objects disjoint after every step, and all objects after the drain', async () => {
    await runModel(false, Number(process.env.PREFIX_MODEL_RUNS ?? 8), 25);
  }, 600_000);

  it('keeps them with throttling, timeouts, lost answers and handlers that die between two calls', async () => {
    await runModel(true, Number(process.env.PREFIX_MODEL_RUNS ?? 8), 25);
  }, 600_000);
});
