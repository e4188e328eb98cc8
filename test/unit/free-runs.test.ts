/**
 * The free-run search of pools of a range of prefix lengths (lib/domain/search/free-runs.ts,
 * lib/domain/values/prefix-pools.ts), against a brute-force oracle on small pools: which candidates of a
 * length a group's bitmap shows free, which groups a candidate covers, a prefix's run of finest slots
 * and its ancestors.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  freeCandidatesInGroup,
  groupsOfCandidate,
  lastCandidateOfGroup,
  RUN_GROUP_BITS,
} from '../../lib/domain/search/free-runs.ts';
import { ancestorsOf, finestRun, prefixValueAt } from '../../lib/domain/values/prefix-pools.ts';

const GROUP = 1 << RUN_GROUP_BITS;

/** Objects as (finest first slot, log2 of their run) placed in one group, and the bitmap they make. */
const groupArb = fc
  .tuple(
    fc.bigInt({ min: 0n, max: 50n }),
    fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.nat()), { maxLength: 30 }),
  )
  .map(([group, objects]) => {
    const held = new Set<number>();
    for (const [shift, position] of objects) {
      const size = 1 << shift;
      const first = (position % (GROUP / size)) * size;
      for (let i = 0; i < size; i++) held.add(first + i);
    }
    return { group, held };
  });

describe('free runs in a group', () => {
  it('finds exactly the candidates whose aligned runs hold no set bit (brute force)', () => {
    fc.assert(
      fc.property(groupArb, fc.integer({ min: 0, max: 12 }), ({ group, held }, shift) => {
        const perGroup = BigInt(GROUP >> shift);
        const first = group * perGroup;
        const last = lastCandidateOfGroup(first, shift);
        expect(last - first + 1n).toBe(perGroup);
        const found = freeCandidatesInGroup((offset) => held.has(offset), group, first, last, shift);
        const oracle: bigint[] = [];
        for (let c = first; c <= last; c++) {
          const offset = Number(c - first) << shift;
          let free = true;
          for (let i = 0; i < 1 << shift; i++) if (held.has(offset + i)) free = false;
          if (free) oracle.push(c);
        }
        expect(found).toEqual(oracle);
      }),
      { numRuns: 300 },
    );
  });

  it('never offers a candidate that overlaps a held slot, and offers every free one in order', () => {
    fc.assert(
      fc.property(groupArb, fc.integer({ min: 0, max: 12 }), ({ group, held }, shift) => {
        const first = group * BigInt(GROUP >> shift);
        const found = freeCandidatesInGroup(
          (offset) => held.has(offset),
          group,
          first,
          lastCandidateOfGroup(first, shift),
          shift,
        );
        for (const candidate of found) {
          const offset = Number(candidate - first) << shift;
          for (let i = 0; i < 1 << shift; i++) expect(held.has(offset + i)).toBe(false);
        }
        expect([...found].sort((a, b) => (a < b ? -1 : 1))).toEqual(found);
      }),
      { numRuns: 60 },
    );
  });

  it('names the groups a candidate covers: one, or whole groups when its run is larger', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1000n }), fc.integer({ min: 0, max: 20 }), (candidate, shift) => {
        const { first, last } = groupsOfCandidate(candidate, shift);
        const runFirst = candidate << BigInt(shift);
        const runLast = runFirst + (1n << BigInt(shift)) - 1n;
        expect(first).toBe(runFirst >> BigInt(RUN_GROUP_BITS));
        expect(last).toBe(runLast >> BigInt(RUN_GROUP_BITS));
      }),
    );
  });
});

describe('a prefix, its run and its ancestors', () => {
  it('covers 2^(max − L) finest slots from its network, and its ancestors contain it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 8, max: 24 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        fc.nat(),
        (min, extra, finer, position) => {
          const length = min + extra;
          const max = length + finer;
          const slot = BigInt(position % 2 ** length);
          const value = prefixValueAt(4, length, slot);
          const run = finestRun(value, max);
          expect(run.last - run.first + 1n).toBe(1n << BigInt(max - length));
          expect(run.first).toBe(slot << BigInt(max - length));
          const ancestors = ancestorsOf(value, min);
          expect(ancestors.map((a) => a.length)).toEqual(Array.from({ length: extra }, (_, i) => min + i));
          for (const ancestor of ancestors) {
            const outer = finestRun(ancestor, max);
            expect(outer.first <= run.first && run.last <= outer.last).toBe(true);
          }
        },
      ),
    );
  });
});
