/**
 * The occupancy map's pure parts (lib/domain/search/occupancy.ts): spans, buckets and counting a bitmap's
 * bits in a range, checked against counting bit by bit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketWithin, heldInRange, planBuckets, spanOf } from '../../lib/domain/search/occupancy.ts';

const GROUP = 4096;

function naiveHeld(bits: Uint8Array, groupFirst: bigint, first: bigint, last: bigint): number {
  let held = 0;
  for (let i = 0; i < GROUP; i++) {
    const slot = groupFirst + BigInt(i);
    if (slot >= first && slot <= last && ((bits[i >> 3]! >> (i & 7)) & 1) === 1) held++;
  }
  return held;
}

describe('heldInRange', () => {
  it('counts the held bits of a range as counting them one by one does', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: GROUP / 8, maxLength: GROUP / 8 }),
        fc.bigInt({ min: -5000n, max: 9000n }),
        fc.bigInt({ min: 0n, max: 9000n }),
        (bits, first, length) => {
          const groupFirst = 4096n;
          const range = { first, last: first + length };
          expect(heldInRange(bits, groupFirst, GROUP, range)).toBe(
            naiveHeld(bits, groupFirst, range.first, range.last),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('planBuckets', () => {
  it('covers an index span exactly, in buckets of one width but the last', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 40n }),
        fc.bigInt({ min: 0n, max: 2n ** 40n }),
        fc.integer({ min: 1, max: 4096 }),
        (first, size, count) => {
          const span = { first, last: first + size };
          const { width, buckets } = planBuckets(span, count, [span]);
          expect(buckets.length).toBeLessThanOrEqual(count);
          expect(buckets[0]!.first).toBe(span.first);
          expect(buckets.at(-1)!.last).toBe(span.last);
          buckets.forEach((bucket, i) => {
            if (i > 0) expect(bucket.first).toBe(buckets[i - 1]!.last + 1n);
            if (i < buckets.length - 1) expect(bucket.last - bucket.first + 1n).toBe(width);
            expect(bucket.size).toBe(bucket.last - bucket.first + 1n);
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('cuts an IP span into CIDRs, counting candidates only', () => {
    const shape = { kind: 'IPAddressPool' as const, family: 4 as const };
    const span = spanOf(shape, [{ first: 0x0a2a0001n, last: 0x0a2afffen }], undefined);
    expect(typeof span).toBe('object');
    const ip = span as Exclude<typeof span, string | undefined>;
    expect(bucketWithin(ip, ip)).toBe('10.42.0.0/16');
    const { width, buckets } = planBuckets(ip, 300, [{ first: 0x0a2a0001n, last: 0x0a2afffen }]);
    expect(width).toBe(256n);
    expect(buckets).toHaveLength(256);
    expect(bucketWithin(ip, buckets[1]!)).toBe('10.42.1.0/24');
    expect(buckets[0]!.size).toBe(255n);
    expect(buckets[1]!.size).toBe(256n);
  });

  it('names the problem with a within of the wrong form or family', () => {
    const shape = { kind: 'IPAddressPool' as const, family: 4 as const };
    expect(spanOf(shape, [], '2001:db8::/64')).toMatch(/IPv6 but the pool is IPv4/);
    expect(spanOf(shape, [], 'nonsense')).toMatch(/^within: /);
    expect(spanOf({ kind: 'IndexPool' }, [], '9..3')).toMatch(/starts after it ends/);
    expect(spanOf({ kind: 'IndexPool' }, [], undefined)).toBeUndefined();
  });
});
