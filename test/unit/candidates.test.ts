import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  containsSlot,
  countCandidates,
  intersectSegments,
  ordinalOf,
  overlaps,
  runsFrom,
  segmentSize,
  slotAt,
  spanStartOrdinal,
  subtractSegments,
  type Segment,
} from '../../lib/domain/values/candidates.ts';

const seg = (first: bigint, last: bigint): Segment => ({ first, last });

/** Every slot of the segments, in candidate order: only for small lists. */
function enumerate(segments: Iterable<Segment>): bigint[] {
  const slots: bigint[] = [];
  for (const { first, last } of segments) for (let slot = first; slot <= last; slot++) slots.push(slot);
  return slots;
}

/**
 * Small disjoint segments in arbitrary order (spec order need not be ascending), from an arbitrary base so
 * that slots beyond 2^53 and 2^64 are exercised too.
 */
const segmentLists: fc.Arbitrary<Segment[]> = fc
  .tuple(
    fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 70n })),
    fc.array(fc.record({ gap: fc.integer({ min: 0, max: 4 }), size: fc.integer({ min: 1, max: 6 }) }), {
      maxLength: 6,
    }),
  )
  .map(([base, shapes]) => {
    const segments: Segment[] = [];
    let cursor = base;
    for (const { gap, size } of shapes) {
      // A gap of 0 makes adjacent (touching, not overlapping) runs.
      const first = cursor + BigInt(gap);
      const last = first + BigInt(size) - 1n;
      segments.push({ first, last });
      cursor = last + 1n;
    }
    return segments;
  })
  .chain((segments) =>
    fc.shuffledSubarray(segments, { minLength: segments.length, maxLength: segments.length }),
  );

/** Runs that may overlap each other, extend past the candidates, and come in any order. */
const runsAround = (segments: readonly Segment[]): fc.Arbitrary<Segment[]> => {
  const low = segments.reduce((min, s) => (s.first < min ? s.first : min), segments[0]?.first ?? 0n) - 3n;
  const high = segments.reduce((max, s) => (s.last > max ? s.last : max), segments[0]?.last ?? 0n) + 3n;
  const bound = fc.bigInt({ min: low, max: high });
  return fc.array(
    fc.tuple(bound, bound).map(([a, b]) => (a <= b ? seg(a, b) : seg(b, a))),
    { maxLength: 5 },
  );
};

describe('segmentSize and countCandidates', () => {
  it.each([
    { segments: [], total: 0n },
    { segments: [seg(5n, 5n)], total: 1n },
    { segments: [seg(0n, 9n)], total: 10n },
    { segments: [seg(10n, 19n), seg(0n, 4n)], total: 15n },
    { segments: [seg(0n, 2n ** 64n - 1n)], total: 2n ** 64n },
    { segments: [seg(0n, 2n ** 128n - 1n), seg(2n ** 128n, 2n ** 128n)], total: 2n ** 128n + 1n },
  ])('counts $total candidates in $segments.length segment(s)', ({ segments, total }) => {
    expect(countCandidates(segments)).toBe(total);
  });

  it('sizes an inclusive run: both bounds count', () => {
    expect(segmentSize(seg(7n, 7n))).toBe(1n);
    expect(segmentSize(seg(7n, 8n))).toBe(2n);
  });
});

describe('containsSlot', () => {
  const segments = [seg(20n, 29n), seg(0n, 4n)];
  it.each([
    { slot: 0n, contained: true },
    { slot: 4n, contained: true },
    { slot: 5n, contained: false },
    { slot: 19n, contained: false },
    { slot: 20n, contained: true },
    { slot: 29n, contained: true },
    { slot: 30n, contained: false },
    { slot: -1n, contained: false },
  ])('slot $slot is a candidate: $contained', ({ slot, contained }) => {
    expect(containsSlot(segments, slot)).toBe(contained);
  });

  it('finds nothing in no segments', () => {
    expect(containsSlot([], 0n)).toBe(false);
  });
});

describe('overlaps', () => {
  it.each([
    { a: seg(100n, 200n), b: seg(150n, 250n), overlap: true, why: 'partly overlapping runs' },
    { a: seg(100n, 200n), b: seg(200n, 300n), overlap: true, why: 'a shared bound' },
    { a: seg(200n, 300n), b: seg(100n, 200n), overlap: true, why: 'a shared bound, either way round' },
    { a: seg(100n, 200n), b: seg(201n, 300n), overlap: false, why: 'adjacent runs' },
    { a: seg(201n, 300n), b: seg(100n, 200n), overlap: false, why: 'adjacent runs, either way round' },
    { a: seg(0n, 1000n), b: seg(10n, 20n), overlap: true, why: 'one inside the other' },
    { a: seg(5n, 5n), b: seg(5n, 5n), overlap: true, why: 'the same single slot' },
    { a: seg(5n, 5n), b: seg(6n, 6n), overlap: false, why: 'neighbouring single slots' },
  ])('$why → $overlap', ({ a, b, overlap }) => {
    expect(overlaps(a, b)).toBe(overlap);
  });
});

describe('slotAt and ordinalOf', () => {
  // Spec order, not ascending: the candidates are 20..24, then 0..2.
  const segments = [seg(20n, 24n), seg(0n, 2n)];

  it.each([
    { ordinal: 0n, slot: 20n },
    { ordinal: 4n, slot: 24n },
    { ordinal: 5n, slot: 0n },
    { ordinal: 7n, slot: 2n },
  ])('position $ordinal holds slot $slot, in spec order', ({ ordinal, slot }) => {
    expect(slotAt(segments, ordinal)).toBe(slot);
    expect(ordinalOf(segments, slot)).toBe(ordinal);
  });

  it.each([8n, 9n, 2n ** 64n])('position %s is past the end: undefined', (ordinal) => {
    expect(slotAt(segments, ordinal)).toBeUndefined();
  });

  it.each([3n, 19n, 25n, -1n])('slot %s is no candidate: no position', (slot) => {
    expect(ordinalOf(segments, slot)).toBeUndefined();
  });

  it('has no positions in no segments', () => {
    expect(slotAt([], 0n)).toBeUndefined();
    expect(ordinalOf([], 0n)).toBeUndefined();
  });

  it('addresses positions in a huge run without enumerating it', () => {
    const huge = [seg(2n ** 64n, 2n ** 128n - 1n), seg(0n, 0n)];
    expect(slotAt(huge, 2n ** 128n - 2n ** 64n - 1n)).toBe(2n ** 128n - 1n);
    expect(slotAt(huge, 2n ** 128n - 2n ** 64n)).toBe(0n);
    expect(ordinalOf(huge, 0n)).toBe(2n ** 128n - 2n ** 64n);
  });
});

describe('subtractSegments', () => {
  it.each([
    { why: 'nothing excluded', segments: [seg(0n, 9n)], excluded: [], result: [seg(0n, 9n)] },
    {
      why: 'a hole in the middle',
      segments: [seg(0n, 9n)],
      excluded: [seg(3n, 4n)],
      result: [seg(0n, 2n), seg(5n, 9n)],
    },
    { why: 'the first slot', segments: [seg(0n, 9n)], excluded: [seg(0n, 0n)], result: [seg(1n, 9n)] },
    { why: 'the last slot', segments: [seg(0n, 9n)], excluded: [seg(9n, 9n)], result: [seg(0n, 8n)] },
    { why: 'the whole run', segments: [seg(0n, 9n)], excluded: [seg(0n, 9n)], result: [] },
    { why: 'a cut wider than the run', segments: [seg(5n, 9n)], excluded: [seg(0n, 100n)], result: [] },
    {
      why: 'a cut outside the run',
      segments: [seg(5n, 9n)],
      excluded: [seg(20n, 30n)],
      result: [seg(5n, 9n)],
    },
    {
      why: 'unsorted, overlapping cuts',
      segments: [seg(0n, 20n)],
      excluded: [seg(15n, 16n), seg(2n, 5n), seg(4n, 8n)],
      result: [seg(0n, 1n), seg(9n, 14n), seg(17n, 20n)],
    },
    {
      why: 'cuts across segments in spec order',
      segments: [seg(100n, 109n), seg(0n, 9n)],
      excluded: [seg(5n, 104n)],
      result: [seg(105n, 109n), seg(0n, 4n)],
    },
    { why: 'no segments', segments: [], excluded: [seg(0n, 1n)], result: [] },
  ])('keeps candidate order with $why', ({ segments, excluded, result }) => {
    expect(subtractSegments(segments, excluded)).toEqual(result);
  });

  it('does not reorder the caller’s excluded list', () => {
    const excluded = [seg(8n, 8n), seg(2n, 2n)];
    subtractSegments([seg(0n, 9n)], excluded);
    expect(excluded).toEqual([seg(8n, 8n), seg(2n, 2n)]);
  });
});

describe('intersectSegments', () => {
  it.each([
    {
      why: 'a window inside one run',
      segments: [seg(0n, 99n)],
      within: seg(10n, 19n),
      result: [seg(10n, 19n)],
    },
    {
      why: 'a window wider than the runs',
      segments: [seg(10n, 19n)],
      within: seg(0n, 99n),
      result: [seg(10n, 19n)],
    },
    {
      why: 'a window on a shared bound',
      segments: [seg(10n, 19n)],
      within: seg(19n, 30n),
      result: [seg(19n, 19n)],
    },
    { why: 'a window outside every run', segments: [seg(10n, 19n)], within: seg(20n, 30n), result: [] },
    {
      why: 'a window across runs in spec order',
      segments: [seg(50n, 59n), seg(0n, 9n), seg(20n, 29n)],
      within: seg(5n, 55n),
      result: [seg(50n, 55n), seg(5n, 9n), seg(20n, 29n)],
    },
  ])('keeps $why', ({ segments, within, result }) => {
    expect(intersectSegments(segments, within)).toEqual(result);
  });
});

describe('runsFrom', () => {
  const segments = [seg(20n, 24n), seg(0n, 2n), seg(10n, 10n)];

  it.each([
    { from: 0n, runs: [seg(20n, 24n), seg(0n, 2n), seg(10n, 10n)] },
    { from: 3n, runs: [seg(23n, 24n), seg(0n, 2n), seg(10n, 10n)] },
    { from: 5n, runs: [seg(0n, 2n), seg(10n, 10n)] },
    { from: 7n, runs: [seg(2n, 2n), seg(10n, 10n)] },
    { from: 8n, runs: [seg(10n, 10n)] },
    { from: 9n, runs: [] },
    { from: 1000n, runs: [] },
  ])('from position $from walks $runs.length run(s)', ({ from, runs }) => {
    expect([...runsFrom(segments, from)]).toEqual(runs);
  });

  it('walks a huge run from deep inside without enumerating it', () => {
    expect([...runsFrom([seg(0n, 2n ** 64n - 1n)], 2n ** 63n)]).toEqual([seg(2n ** 63n, 2n ** 64n - 1n)]);
  });
});

describe('properties on small disjoint segment lists in arbitrary order', () => {
  it('countCandidates is the length of the enumeration', () => {
    fc.assert(
      fc.property(segmentLists, (segments) => {
        expect(countCandidates(segments)).toBe(BigInt(enumerate(segments).length));
      }),
    );
  });

  it('slotAt and ordinalOf are inverse on every candidate and every position', () => {
    fc.assert(
      fc.property(segmentLists, (segments) => {
        const slots = enumerate(segments);
        slots.forEach((slot, i) => {
          expect(ordinalOf(segments, slot)).toBe(BigInt(i));
          expect(slotAt(segments, BigInt(i))).toBe(slot);
          expect(slotAt(segments, ordinalOf(segments, slot)!)).toBe(slot);
          expect(ordinalOf(segments, slotAt(segments, BigInt(i))!)).toBe(BigInt(i));
        });
        expect(slotAt(segments, BigInt(slots.length))).toBeUndefined();
      }),
    );
  });

  it('containsSlot agrees with the enumeration, and ordinalOf is undefined exactly off it', () => {
    fc.assert(
      fc.property(
        segmentLists.chain((segments) => fc.tuple(fc.constant(segments), runsAround(segments))),
        ([segments, probes]) => {
          const slots = new Set(enumerate(segments));
          for (const probe of enumerate(probes)) {
            expect(containsSlot(segments, probe)).toBe(slots.has(probe));
            expect(ordinalOf(segments, probe) !== undefined).toBe(slots.has(probe));
          }
        },
      ),
    );
  });

  it('subtractSegments leaves exactly the enumeration minus the excluded slots, in the same order', () => {
    fc.assert(
      fc.property(
        segmentLists.chain((segments) => fc.tuple(fc.constant(segments), runsAround(segments))),
        ([segments, excluded]) => {
          const cut = new Set(enumerate(excluded));
          const result = subtractSegments(segments, excluded);
          expect(enumerate(result)).toEqual(enumerate(segments).filter((slot) => !cut.has(slot)));
          for (const run of result) expect(run.first <= run.last).toBe(true);
        },
      ),
    );
  });

  it('intersectSegments leaves exactly the enumerated slots inside the window, in the same order', () => {
    fc.assert(
      fc.property(
        segmentLists.chain((segments) =>
          fc.tuple(
            fc.constant(segments),
            runsAround(segments).map((runs) => runs[0] ?? seg(0n, 0n)),
          ),
        ),
        ([segments, within]) => {
          const result = intersectSegments(segments, within);
          expect(enumerate(result)).toEqual(
            enumerate(segments).filter((slot) => within.first <= slot && slot <= within.last),
          );
          for (const run of result) expect(run.first <= run.last).toBe(true);
        },
      ),
    );
  });

  it('runsFrom(segments, k) enumerates exactly the candidates from position k on', () => {
    fc.assert(
      fc.property(
        segmentLists.chain((segments) =>
          fc.tuple(fc.constant(segments), fc.integer({ min: 0, max: enumerate(segments).length + 2 })),
        ),
        ([segments, k]) => {
          expect(enumerate(runsFrom(segments, BigInt(k)))).toEqual(enumerate(segments).slice(k));
        },
      ),
    );
  });
});

describe('spanStartOrdinal', () => {
  it('is the ordinal of the first candidate of the aligned span, within the same segment', () => {
    // Slots 100..299 then 1000..1003; spans of 64 slots: 64..127, 128..191, ...
    const segments = [seg(100n, 299n), seg(1000n, 1003n)];
    expect(spanStartOrdinal(segments, 0n, 64n)).toBe(0n); // slot 100: its span starts at 64, before the segment
    expect(spanStartOrdinal(segments, 30n, 64n)).toBe(28n); // slot 130 → span 128..191 → slot 128
    expect(spanStartOrdinal(segments, 28n, 64n)).toBe(28n);
    expect(spanStartOrdinal(segments, 201n, 64n)).toBe(200n); // slot 1001 → span 960.. → segment start 1000
    expect(spanStartOrdinal(segments, 204n, 64n)).toBeUndefined();
  });

  it('names a candidate at or before the given one, in the same span (property)', () => {
    fc.assert(
      fc.property(
        segmentLists.filter((segments) => segments.length > 0),
        fc.nat(),
        fc.constantFrom(1n, 2n, 4n, 64n),
        (segments, n, span) => {
          const total = countCandidates(segments);
          const ordinal = BigInt(n) % total;
          const first = spanStartOrdinal(segments, ordinal, span)!;
          expect(first <= ordinal).toBe(true);
          const slot = slotAt(segments, ordinal)!;
          const firstSlot = slotAt(segments, first)!;
          expect(firstSlot / span).toBe(slot / span);
          // Nothing between them leaves the span or the segment: the slots are consecutive.
          expect(slot - firstSlot).toBe(ordinal - first);
          // And it is the first such: the candidate before it is in another span or another segment.
          const segmentOf = (of: bigint) => segments.findIndex((s) => s.first <= of && of <= s.last);
          expect(segmentOf(firstSlot)).toBe(segmentOf(slot));
          if (first > 0n) {
            const before = slotAt(segments, first - 1n)!;
            expect(before / span !== slot / span || segmentOf(before) !== segmentOf(slot)).toBe(true);
          }
        },
      ),
    );
  });
});
