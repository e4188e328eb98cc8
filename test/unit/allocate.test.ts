import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  BLOCK_SIZE,
  SUMMARY_SPAN,
  allocateNext,
  type AllocationPort,
  type HeldTest,
} from '../../lib/domain/search/allocate.ts';

import type { Segment } from '../../lib/domain/values/candidates.ts';
import type { ParsedValue } from '../../lib/domain/values/values.ts';
import { GROUP_BITS } from '../../lib/store/keys.ts';

const seg = (first: bigint, last: bigint): Segment => ({ first, last });
const valueAt = (slot: bigint): ParsedValue => ({ value: slot.toString(), slot });

/** Every slot of the segments, in candidate order: only for small pools. */
function enumerate(segments: readonly Segment[]): bigint[] {
  const slots: bigint[] = [];
  for (const { first, last } of segments) for (let slot = first; slot <= last; slot++) slots.push(slot);
  return slots;
}

function range(first: bigint, last: bigint): bigint[] {
  return enumerate([seg(first, last)]);
}

/**
 * An in-memory store: a set of held slots. `stolen` slots are free when read but taken by another caller
 * just before our put (a lost race, once each). Every heldSlots call is checked to stay inside one block.
 */
class MemoryPort implements AllocationPort {
  readonly held: Set<bigint>;
  readonly stolen: Set<bigint>;
  readonly reads: Array<[bigint, bigint]> = [];
  readonly puts: bigint[] = [];

  constructor(held: Iterable<bigint> = [], stolen: Iterable<bigint> = []) {
    this.held = new Set(held);
    this.stolen = new Set(stolen);
  }

  async heldSlots(first: bigint, last: bigint, limit?: number): Promise<bigint[]> {
    this.reads.push([first, last]);
    expect(first <= last, `heldSlots(${first}, ${last}) reads an empty range`).toBe(true);
    expect(first >> 6n, `heldSlots(${first}, ${last}) crosses a 64-slot block`).toBe(last >> 6n);
    return [...this.held]
      .filter((slot) => first <= slot && slot <= last)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit);
  }

  async tryCreate(value: ParsedValue): Promise<boolean> {
    this.puts.push(value.slot);
    if (this.stolen.delete(value.slot)) {
      this.held.add(value.slot);
      return false;
    }
    if (this.held.has(value.slot)) return false;
    this.held.add(value.slot);
    return true;
  }
}

async function allocatedSlot(
  segments: readonly Segment[],
  port: MemoryPort,
  options: Parameters<typeof allocateNext>[3] = {},
): Promise<bigint | undefined> {
  const outcome = await allocateNext(segments, valueAt, port, options);
  return outcome.kind === 'allocated' ? outcome.value.slot : undefined;
}

describe('allocateNext, a lone caller', () => {
  it('has 64-slot blocks', () => {
    expect(BLOCK_SIZE).toBe(64n);
  });

  it.each([
    { why: 'the lowest slot of an empty pool', segments: [seg(0n, 9n)], held: [], slot: 0n },
    { why: 'past held slots', segments: [seg(0n, 9n)], held: [0n, 1n, 2n], slot: 3n },
    { why: 'into a hole among held slots', segments: [seg(0n, 9n)], held: [0n, 1n, 3n], slot: 2n },
    {
      why: 'the first range in spec order, not the lowest slot',
      segments: [seg(100n, 109n), seg(0n, 9n)],
      held: [],
      slot: 100n,
    },
    {
      why: 'into the next range in spec order once one is full',
      segments: [seg(100n, 101n), seg(0n, 9n)],
      held: [100n, 101n],
      slot: 0n,
    },
    { why: 'ascending inside a range', segments: [seg(64512n, 65534n)], held: [64512n], slot: 64513n },
    {
      why: 'across a block boundary',
      segments: [seg(0n, 199n)],
      held: range(0n, 149n),
      slot: 150n,
    },
    {
      why: 'in a range that starts and ends mid-block',
      segments: [seg(60n, 70n)],
      held: range(60n, 65n),
      slot: 66n,
    },
    {
      why: 'past held slots outside the pool, which do not count',
      segments: [seg(10n, 12n)],
      held: [0n, 9n, 13n, 100n],
      slot: 10n,
    },
  ])('allocates $why', async ({ segments, held, slot }) => {
    const port = new MemoryPort(held);
    const outcome = await allocateNext(segments, valueAt, port);
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(slot), collisions: 0, raced: false });
    expect(port.puts).toEqual([slot]);
    expect(port.held.has(slot)).toBe(true);
  });

  it.each([
    { from: 0n, slot: 100n },
    { from: 5n, slot: 105n },
    { from: 9n, slot: 109n },
    { from: 10n, slot: 0n },
    { from: 19n, slot: 9n },
  ])('starts at position $from in candidate order ($slot)', async ({ from, slot }) => {
    const port = new MemoryPort();
    expect(await allocatedSlot([seg(100n, 109n), seg(0n, 9n)], port, { from })).toBe(slot);
  });

  it('does not go back before `from`, even to a free slot', async () => {
    const port = new MemoryPort([5n, 6n, 7n, 8n, 9n]);
    expect(await allocateNext([seg(0n, 9n)], valueAt, port, { from: 5n })).toEqual({
      kind: 'exhausted',
      collisions: 0,
      raced: false,
    });
  });

  it.each([
    {
      why: 'every candidate is held',
      segments: [seg(0n, 9n), seg(20n, 29n)],
      held: [...range(0n, 9n), ...range(20n, 29n)],
      from: 0n,
    },
    { why: 'the pool has no candidates', segments: [], held: [], from: 0n },
    { why: '`from` is past the end', segments: [seg(0n, 9n)], held: [], from: 10n },
  ])('is exhausted when $why', async ({ segments, held, from }) => {
    const port = new MemoryPort(held);
    expect(await allocateNext(segments, valueAt, port, { from })).toEqual({
      kind: 'exhausted',
      collisions: 0,
      raced: false,
    });
    expect(port.puts).toEqual([]);
  });

  it('reads one block per heldSlots call, walking blocks in order', async () => {
    const port = new MemoryPort(range(0n, 149n));
    await allocateNext([seg(0n, 199n)], valueAt, port);
    expect(port.reads).toEqual([
      [0n, 63n],
      [64n, 127n],
      [128n, 191n],
    ]);
  });

  it('reads a range that starts mid-block from its first slot to the block end', async () => {
    const port = new MemoryPort(range(60n, 63n));
    await allocateNext([seg(60n, 70n)], valueAt, port);
    expect(port.reads).toEqual([
      [60n, 63n],
      [64n, 70n],
    ]);
  });

  it('finds a free slot deep in a 2^64-slot pool with one read and one put', async () => {
    const port = new MemoryPort(range(0n, 999n));
    const outcome = await allocateNext([seg(0n, 2n ** 64n - 1n)], valueAt, port, { from: 1000n });
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(1000n), collisions: 0, raced: false });
    expect(port.reads).toHaveLength(1);
    expect(port.reads[0]).toEqual([1000n, 1023n]);
    expect(port.puts).toEqual([1000n]);
  });

  it('finds a free slot at the top of a 2^128-slot pool with one read', async () => {
    const top = 2n ** 128n - 1n;
    const port = new MemoryPort();
    const outcome = await allocateNext([seg(0n, top)], valueAt, port, { from: top });
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(top), collisions: 0, raced: false });
    expect(port.reads).toEqual([[top, top]]);
  });

  it('never consults random while nothing collides', async () => {
    const port = new MemoryPort([0n]);
    const random = () => {
      throw new Error('random consulted without a collision');
    };
    expect(await allocatedSlot([seg(0n, 9n)], port, { random })).toBe(1n);
  });
});

/** A port whose summary may lag: it shows `summary` as held, while the store holds `held`. */
class LaggingPort extends MemoryPort {
  readonly summaryReads: Array<[bigint, bigint]> = [];

  constructor(
    held: Iterable<bigint>,
    readonly summary: Set<bigint>,
  ) {
    super(held);
  }

  async summaryHeld(first: bigint, last: bigint): Promise<HeldTest> {
    this.summaryReads.push([first, last]);
    expect(first >> 12n, `summaryHeld(${first}, ${last}) crosses a summary span`).toBe(last >> 12n);
    const shown = new Set(this.summary);
    return (offset) => {
      expect(offset, 'an offset past the span read').toBeLessThanOrEqual(Number(last - first));
      return shown.has(first + BigInt(offset));
    };
  }
}

describe('allocateNext, with the summary', () => {
  it('reads 4096 slots in one summary read, and no allocation object', async () => {
    expect(SUMMARY_SPAN).toBe(1n << GROUP_BITS);
    const held = Array.from({ length: 4000 }, (_, i) => BigInt(i));
    const port = new LaggingPort(held, new Set(held));
    const outcome = await allocateNext([seg(0n, 9999n)], valueAt, port);
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(4000n), collisions: 0, raced: false });
    expect(port.summaryReads).toEqual([[0n, 4095n]]);
    expect(port.reads).toEqual([]);
  });

  it('when a value the summary showed free is taken, reads the objects and takes the lowest free one, without calling it a race', async () => {
    // The summary lags: it has not seen 3, 4 and 5 taken.
    const port = new LaggingPort([0n, 1n, 2n, 3n, 4n, 5n], new Set([0n, 1n, 2n]));
    const outcome = await allocateNext([seg(0n, 99n)], valueAt, port, { random: () => 0.99 });
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(6n), collisions: 1, raced: false });
    expect(port.puts).toEqual([3n, 6n]);
    // The objects are read from the lost value on, a few at first (cheap where free values are near).
    expect(port.reads).toEqual([[3n, 63n]]);
  });

  it('reads the objects only for the block where the summary lagged, then the summary again', async () => {
    const block = Array.from({ length: 64 }, (_, i) => BigInt(i));
    const port = new LaggingPort(block, new Set());
    const outcome = await allocateNext([seg(0n, 9999n)], valueAt, port);
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(64n), collisions: 1, raced: false });
    expect(port.reads.every(([first, last]) => first >= 0n && last <= 63n)).toBe(true);
    expect(port.summaryReads).toEqual([
      [0n, 4095n],
      [64n, 4095n],
    ]);
  });

  it('passes over a value the summary still shows held (freed a moment ago)', async () => {
    const port = new LaggingPort([1n], new Set([0n, 1n]));
    const outcome = await allocateNext([seg(0n, 9n)], valueAt, port);
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(2n), collisions: 0, raced: false });
  });

  it('when contended, picks at random among the free values the summary shows, and again after a lost put, before reading the objects', async () => {
    const port = new LaggingPort([0n, 1n], new Set([10n, 20n]));
    const picks = [0, 0, 0.5];
    const outcome = await allocateNext([seg(0n, 99n)], valueAt, port, {
      contended: true,
      random: () => picks.shift() ?? 0,
    });
    // Of the 98 values the summary shows free, the first pick (0) is 0, taken (lost); the second (0) is 1,
    // taken too (lost); the third (0.5) is index 48 of the 96 left (2..99 without 10 and 20): 52.
    expect(outcome).toEqual({
      kind: 'allocated',
      value: valueAt(52n),
      collisions: 2,
      raced: false,
      spanFreeShare: 0.98,
    });
    expect(port.puts).toEqual([0n, 1n, 52n]);
    expect(port.reads).toEqual([]);
  });

  it('when contended, makes even its first pick at random, and says how much of the span was free', async () => {
    const held = new Set(Array.from({ length: 50 }, (_, i) => BigInt(i * 2)));
    const port = new LaggingPort(held, held);
    const outcome = await allocateNext([seg(0n, 99n)], valueAt, port, {
      contended: true,
      random: () => 0.99,
    });
    // 50 odd values free; 0.99 picks the last of them.
    expect(outcome).toEqual({
      kind: 'allocated',
      value: valueAt(99n),
      collisions: 0,
      raced: false,
      spanFreeShare: 0.5,
    });
  });

  it('calls it a race when the objects show several values taken by others since the summary', async () => {
    const port = new LaggingPort([0n, 1n, 2n], new Set());
    const mine = (slot: bigint) => slot === 0n;
    expect(
      await allocateNext([seg(0n, 99n)], valueAt, port, { tookRecently: mine, stopAtCollision: true }),
    ).toEqual({ kind: 'collided', collisions: 1, raced: true });
    // Its own value and one other (a pre-provisioned object, say) are no sign of other callers.
    const calm = new LaggingPort([0n, 1n], new Set());
    expect(
      await allocateNext([seg(0n, 99n)], valueAt, calm, { tookRecently: mine, stopAtCollision: true }),
    ).toEqual({ kind: 'allocated', value: valueAt(2n), collisions: 1, raced: false });
  });

  it('calls it a race when the objects showed the value free too', async () => {
    const port = new LaggingPort([], new Set());
    port.stolen.add(0n);
    port.stolen.add(1n);
    const outcome = await allocateNext([seg(0n, 9n)], valueAt, port, { random: () => 0 });
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(2n), collisions: 2, raced: true });
  });
});

describe('allocateNext, losing races', () => {
  it('stops at the first lost race when asked, so the caller can look elsewhere', async () => {
    const port = new MemoryPort([], [0n]);
    const outcome = await allocateNext([seg(0n, 9n)], valueAt, port, { stopAtCollision: true });
    expect(outcome).toEqual({ kind: 'collided', collisions: 1, raced: true });
    expect(port.puts).toEqual([0n]);
  });

  it('moves on from a slot another caller took and counts the collision', async () => {
    const port = new MemoryPort([], [0n]);
    const outcome = await allocateNext([seg(0n, 9n)], valueAt, port, { random: () => 0 });
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(1n), collisions: 1, raced: true });
    expect(port.puts).toEqual([0n, 1n]);
  });

  it('counts every collision', async () => {
    const port = new MemoryPort([], [0n, 1n, 2n]);
    const outcome = await allocateNext([seg(0n, 9n)], valueAt, port, { random: () => 0 });
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(3n), collisions: 3, raced: true });
  });

  it('after a collision, picks at random among the free slots read in that block', async () => {
    const port = new MemoryPort([], [0n]);
    // 9 free slots left (1..9); 0.99 picks the last of them.
    expect(await allocatedSlot([seg(0n, 9n)], port, { random: () => 0.99 })).toBe(9n);
  });

  it('never picks a slot the read showed as held, even at random', async () => {
    const held = [2n, 4n, 6n, 8n];
    for (const r of [0, 0.2, 0.5, 0.8, 0.999]) {
      const port = new MemoryPort(held, [0n]);
      const slot = await allocatedSlot([seg(0n, 9n)], port, { random: () => r });
      expect(slot).toBeDefined();
      expect([1n, 3n, 5n, 7n, 9n]).toContain(slot);
    }
  });

  it('moves to the next block when a collision takes the last free slot of a block', async () => {
    const port = new MemoryPort(range(0n, 62n), [63n]);
    const outcome = await allocateNext([seg(0n, 127n)], valueAt, port, { random: () => 0 });
    expect(outcome).toEqual({ kind: 'allocated', value: valueAt(64n), collisions: 1, raced: true });
    expect(port.reads).toEqual([
      [0n, 63n],
      [64n, 127n],
    ]);
  });

  it('is exhausted, with the collisions counted, when other callers take every candidate', async () => {
    const port = new MemoryPort([], range(0n, 3n));
    expect(await allocateNext([seg(0n, 3n)], valueAt, port)).toEqual({
      kind: 'exhausted',
      collisions: 4,
      raced: true,
    });
  });

  it('with Math.random, still gets a free slot after losing one race', async () => {
    const port = new MemoryPort([5n], [0n]);
    const outcome = await allocateNext([seg(0n, 9n)], valueAt, port);
    expect(outcome.kind).toBe('allocated');
    expect(outcome.collisions).toBe(1);
    if (outcome.kind === 'allocated') expect([1n, 2n, 3n, 4n, 6n, 7n, 8n, 9n]).toContain(outcome.value.slot);
  });
});

/** Small disjoint pools in arbitrary spec order, placed so that they cross block boundaries. */
const pools: fc.Arbitrary<Segment[]> = fc
  .tuple(
    fc.bigInt({ min: 0n, max: 300n }),
    fc.array(fc.record({ gap: fc.integer({ min: 0, max: 70 }), size: fc.integer({ min: 1, max: 90 }) }), {
      maxLength: 4,
    }),
  )
  .map(([base, shapes]) => {
    const segments: Segment[] = [];
    let cursor = base;
    for (const { gap, size } of shapes) {
      const first = cursor + BigInt(gap);
      segments.push(seg(first, first + BigInt(size) - 1n));
      cursor = first + BigInt(size);
    }
    return segments;
  })
  .chain((segments) =>
    fc.shuffledSubarray(segments, { minLength: segments.length, maxLength: segments.length }),
  );

const scenarios = pools.chain((segments) => {
  const slots = enumerate(segments);
  return fc.record({
    segments: fc.constant(segments),
    // Mostly-held pools reach exhaustion and long walks; sparse ones the first block.
    held: fc.oneof(
      fc.subarray(slots),
      fc.constant(slots),
      fc.subarray(slots).map((some) => slots.filter((s) => !some.includes(s) || s % 7n === 0n)),
    ),
    from: fc.integer({ min: 0, max: slots.length + 1 }),
  });
});

describe('allocateNext properties', () => {
  it('returns exactly the first free candidate at or after `from` in candidate order, or exhausted iff all are held', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async ({ segments, held, from }) => {
        const port = new MemoryPort(held);
        const heldSet = new Set(held);
        const expected = enumerate(segments)
          .slice(from)
          .find((slot) => !heldSet.has(slot));
        const outcome = await allocateNext(segments, valueAt, port, { from: BigInt(from) });
        if (expected === undefined) {
          expect(outcome).toEqual({ kind: 'exhausted', collisions: 0, raced: false });
          expect(port.puts).toEqual([]);
        } else {
          expect(outcome).toEqual({
            kind: 'allocated',
            value: valueAt(expected),
            collisions: 0,
            raced: false,
          });
          expect(port.puts).toEqual([expected]);
        }
      }),
    );
  });

  it('under lost races, allocates a candidate that was free, never one held before, and counts each loss', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenarios.chain((scenario) =>
          fc.record({
            scenario: fc.constant(scenario),
            stolen: fc.subarray(enumerate(scenario.segments)),
            r: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          }),
        ),
        async ({ scenario: { segments, held, from }, stolen, r }) => {
          const port = new MemoryPort(
            held,
            stolen.filter((slot) => !held.includes(slot)),
          );
          const before = new Set(held);
          const stolenSet = new Set(stolen);
          const eligible = enumerate(segments).slice(from);
          const outcome = await allocateNext(segments, valueAt, port, {
            from: BigInt(from),
            random: () => r,
          });
          const losses = port.puts.filter((slot) => stolenSet.has(slot) && !before.has(slot)).length;
          expect(outcome.collisions).toBe(losses);
          if (outcome.kind === 'allocated') {
            expect(eligible).toContain(outcome.value.slot);
            expect(before.has(outcome.value.slot)).toBe(false);
            expect(stolenSet.has(outcome.value.slot)).toBe(false);
          } else {
            // Exhausted only when every eligible candidate was held or taken by another caller.
            for (const slot of eligible) expect(before.has(slot) || stolenSet.has(slot)).toBe(true);
          }
          // No slot is tried twice.
          expect(new Set(port.puts).size).toBe(port.puts.length);
        },
      ),
    );
  });
});

describe('allocateNext, the short read after a summary miss', () => {
  // The summary shows nothing held, the objects hold `held`: the first put (of the lowest value from
  // `from`) loses unless that value is free, and the objects are read from it.
  const lagging = (held: Iterable<bigint>) => new LaggingPort(held, new Set());

  it('reads a few items first, then the rest of the block, and finds the first free slot', async () => {
    const port = lagging(range(0n, 7n));
    expect(await allocatedSlot([seg(0n, 63n)], port)).toBe(8n);
    expect(port.reads).toEqual([
      [0n, 63n],
      [6n, 63n],
    ]);
  });

  it('reads once when the first read shows a free slot', async () => {
    const port = lagging([0n, 2n, 3n]);
    expect(await allocatedSlot([seg(0n, 63n)], port)).toBe(1n);
    expect(port.reads).toHaveLength(1);
  });

  it('returns exactly the first free candidate (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.bigInt({ min: 0n, max: 199n }), { maxLength: 150 }),
        fc.bigInt({ min: 0n, max: 199n }),
        async (held, from) => {
          const segments = [seg(100n, 199n), seg(0n, 99n)];
          const port = lagging(held);
          const expected = enumerate(segments)
            .slice(Number(from))
            .find((slot) => !held.includes(slot));
          const outcome = await allocateNext(segments, valueAt, port, { from });
          expect(outcome.kind === 'allocated' ? outcome.value.slot : undefined).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
