import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { Cause } from '../../lib/domain/errors.ts';
import { ok, problemOf, checked, causesOf } from '../helpers/results.ts';
import type { Segment } from '../../lib/domain/values/candidates.ts';
import type { PoolSpace } from '../../lib/domain/values/values.ts';
import {
  MAX_INDEX,
  checkIndexPoolSpec,
  formatRange,
  indexPoolSpace,
  indexValues,
  parseIndex,
  parseRange,
} from '../../lib/domain/values/ranges.ts';

const seg = (first: bigint, last: bigint): Segment => ({ first, last });
const index = (n: bigint | number) => ok(indexValues.parse(typeof n === 'number' ? n : n.toString()));

describe('parseRange accepts', () => {
  it.each([
    { input: '100..200', range: seg(100n, 200n) },
    { input: '5..5', range: seg(5n, 5n) },
    { input: '42', range: seg(42n, 42n) },
    { input: 42, range: seg(42n, 42n) },
    { input: 0, range: seg(0n, 0n) },
    { input: '0', range: seg(0n, 0n) },
    { input: '0..9223372036854775806', range: seg(0n, MAX_INDEX) },
    { input: '9223372036854775806', range: seg(MAX_INDEX, MAX_INDEX) },
    { input: Number.MAX_SAFE_INTEGER, range: seg(2n ** 53n - 1n, 2n ** 53n - 1n) },
    { input: '64512..65534', range: seg(64512n, 65534n) },
    { input: '007', range: seg(7n, 7n) },
  ])('$input as $range.first..$range.last', ({ input, range }) => {
    expect(ok(parseRange(input))).toEqual(range);
  });
});

describe('parseRange rejects', () => {
  it.each([
    { input: '1..2..3', why: 'three bounds' },
    { input: '-5', why: 'a negative string' },
    { input: -5, why: 'a negative number' },
    { input: '-5..5', why: 'a negative lower bound' },
    { input: '0x10', why: 'hexadecimal' },
    { input: '1.5', why: 'a decimal fraction in a string' },
    { input: 1.5, why: 'a non-integer number' },
    { input: '1e3', why: 'an exponent' },
    { input: '', why: 'the empty string' },
    { input: ' 1', why: 'a leading space' },
    { input: '1 ', why: 'a trailing space' },
    { input: '1.. 2', why: 'a space inside' },
    { input: '..5', why: 'a missing lower bound' },
    { input: '5..', why: 'a missing upper bound' },
    { input: '..', why: 'no bounds' },
    { input: '2..1', why: 'a range that starts after it ends' },
    { input: '9223372036854775807', why: '2^63−1, one past the largest index' },
    { input: '0..9223372036854775807', why: 'an upper bound of 2^63−1' },
    { input: '18446744073709551616', why: 'a 20-digit number' },
    { input: 2 ** 53 + 2, why: 'an unsafe JSON integer' },
    { input: 2 ** 64, why: 'a huge JSON number' },
    { input: Number.NaN, why: 'NaN' },
    { input: Number.POSITIVE_INFINITY, why: 'Infinity' },
    { input: null, why: 'null' },
    { input: true, why: 'a boolean' },
    { input: [1, 2], why: 'an array' },
    { input: { first: 1, last: 2 }, why: 'an object' },
    { input: undefined, why: 'undefined' },
  ])('$why', ({ input }) => {
    expect(parseRange(input).ok).toBe(false);
  });

  it.each([
    { input: '2..1', message: 'starts after it ends' },
    { input: '9223372036854775807', message: 'outside 0..9223372036854775806' },
    { input: 2 ** 53 + 2, message: 'write it as a string' },
    { input: 1.5, message: 'not an integer' },
    { input: '0x10', message: 'not a decimal integer' },
    { input: '1..2..3', message: 'not a range' },
  ])('$input with a problem that says why ($message)', ({ input, message }) => {
    expect(problemOf(parseRange(input))).toContain(message);
  });

  it('clips a long input in its problem', () => {
    const message = problemOf(parseRange('x'.repeat(500)));
    expect(message.length).toBeLessThan(100);
  });
});

describe('parseIndex', () => {
  it.each([
    { input: 0, value: 0n },
    { input: '0', value: 0n },
    { input: '9223372036854775806', value: MAX_INDEX },
    { input: -0, value: 0n },
  ])('reads $input', ({ input, value }) => {
    expect(ok(parseIndex(input))).toBe(value);
  });

  it('has MAX_INDEX = 2^63 − 2', () => {
    expect(MAX_INDEX).toBe(9223372036854775806n);
  });
});

describe('formatRange', () => {
  it.each([
    { range: seg(5n, 5n), text: '5' },
    { range: seg(100n, 200n), text: '100..200' },
    { range: seg(0n, MAX_INDEX), text: '0..9223372036854775806' },
  ])('writes $text', ({ range, text }) => {
    expect(formatRange(range)).toBe(text);
    expect(ok(parseRange(text))).toEqual(range);
  });
});

describe('checkIndexPoolSpec', () => {
  it('rejects a range overlapping an earlier one with the contract’s message', () => {
    expect(causesOf(checkIndexPoolSpec({ ranges: ['100..200', '150..250'] }))).toEqual([
      {
        field: 'spec.ranges[1]',
        message: 'spec.ranges[1] (150..250) overlaps with spec.ranges[0] (100..200)',
      },
    ]);
  });

  it('treats a shared bound as an overlap', () => {
    expect(causesOf(checkIndexPoolSpec({ ranges: ['100..200', '200..300'] }))).toEqual([
      {
        field: 'spec.ranges[1]',
        message: 'spec.ranges[1] (200..300) overlaps with spec.ranges[0] (100..200)',
      },
    ]);
  });

  it('treats a single value inside a range as an overlap', () => {
    expect(causesOf(checkIndexPoolSpec({ ranges: ['1..10', 5] }))).toEqual([
      { field: 'spec.ranges[1]', message: 'spec.ranges[1] (5) overlaps with spec.ranges[0] (1..10)' },
    ]);
  });

  it('names the overlapped range by its place in spec.ranges even after an invalid one', () => {
    // ranges[0] is invalid; ranges[2] overlaps ranges[1], not ranges[0].
    const causes = causesOf(checkIndexPoolSpec({ ranges: ['bad', '1..5', '3..4'] }));
    expect(causes).toHaveLength(2);
    expect(causes[0]!.field).toBe('spec.ranges[0]');
    expect(causes[1]).toEqual({
      field: 'spec.ranges[2]',
      message: 'spec.ranges[2] (3..4) overlaps with spec.ranges[1] (1..5)',
    });
  });

  it.each([
    { ranges: ['100..200', '201..300'], why: 'adjacent ranges' },
    { ranges: ['201..300', '100..200'], why: 'adjacent ranges in descending order' },
    { ranges: [0, '1..9223372036854775806'], why: 'ranges covering every index' },
    { ranges: [5], why: 'one JSON integer' },
  ])('accepts $why', ({ ranges }) => {
    expect(checked(checkIndexPoolSpec({ ranges })).space.segments.length).toBe(ranges.length);
  });

  it.each([
    { spec: { ranges: [] }, why: 'an empty list' },
    { spec: {}, why: 'no ranges' },
    { spec: { ranges: '1..10' }, why: 'a string, not a list' },
    { spec: { ranges: { 0: '1..10' } }, why: 'an object, not a list' },
    { spec: { ranges: null }, why: 'null' },
  ])('rejects $why on spec.ranges', ({ spec }) => {
    expect(causesOf(checkIndexPoolSpec(spec))).toEqual([
      { field: 'spec.ranges', message: 'must be a list of at least one range' },
    ]);
  });

  it('rejects more than 1000 ranges', () => {
    const ranges = Array.from({ length: 1001 }, (_, i) => i);
    expect(causesOf(checkIndexPoolSpec({ ranges }))[0]!.field).toBe('spec.ranges');
  });

  it('accepts 1000 ranges', () => {
    const ranges = Array.from({ length: 1000 }, (_, i) => i * 2);
    expect(checked(checkIndexPoolSpec({ ranges })).space.total).toBe(1000n);
  });

  it('names every invalid range, each by its own index', () => {
    const causes = causesOf(checkIndexPoolSpec({ ranges: ['1..10', '-1', '20..30', '9..8'] }));
    expect(causes.map((cause) => cause.field)).toEqual(['spec.ranges[1]', 'spec.ranges[3]']);
  });

  it('echoes the spec canonically: integers stay integers, strings are rewritten', () => {
    const result = checked(checkIndexPoolSpec({ ranges: ['007..010', 42, '5..5', '100'] }));
    expect(result.spec).toEqual({ ranges: ['7..10', 42, '5', '100'] });
  });

  it('keeps spec order as candidate order', () => {
    const { space } = checked(checkIndexPoolSpec({ ranges: ['300..301', '100..101'] }));
    expect(space.segments).toEqual([seg(300n, 301n), seg(100n, 101n)]);
  });

  it('counts the seed pool: 64512..65534 and 4200000000..4294967294 hold 94968318', () => {
    const { space } = checked(checkIndexPoolSpec({ ranges: ['64512..65534', '4200000000..4294967294'] }));
    expect(space.kind).toBe('IndexPool');
    expect(space.total).toBe(94968318n);
  });

  it('counts the largest pool', () => {
    expect(checked(checkIndexPoolSpec({ ranges: ['0..9223372036854775806'] })).space.total).toBe(
      2n ** 63n - 1n,
    );
  });
});

describe('indexValues', () => {
  it('names the allocation of 64512 in asn-pool asn-pool-64512', () => {
    expect(indexValues.allocationName('asn-pool', index(64512))).toBe('asn-pool-64512');
  });

  it.each([
    { name: 'asn-pool-64512', pool: 'asn-pool', value: '64512' },
    { name: 'p-0', pool: 'p', value: '0' },
    { name: 'vlan-1-5', pool: 'vlan-1', value: '5' },
    { name: 'a.b-9223372036854775806', pool: 'a.b', value: '9223372036854775806' },
  ])('reads $name as $pool index $value', ({ name, pool, value }) => {
    const read = indexValues.parseAllocationName(name);
    expect(read?.pool).toBe(pool);
    expect(read?.value.value).toBe(value);
    expect(read?.value.slot).toBe(BigInt(value));
  });

  it.each([
    { name: 'p-007', why: 'a non-canonical index' },
    { name: 'p-00', why: 'a non-canonical zero' },
    { name: 'p-9223372036854775807', why: 'an index past the largest' },
    { name: 'p-12345678901234567890', why: 'a 20-digit index' },
    { name: 'p', why: 'no index' },
    { name: '-5', why: 'no pool' },
    { name: 'p-', why: 'an empty index' },
    { name: 'p-1a', why: 'a non-decimal index' },
  ])('does not take $name as a deterministic name ($why)', ({ name }) => {
    expect(indexValues.parseAllocationName(name)).toBeUndefined();
  });

  it('round-trips allocationName through parseAllocationName', () => {
    const poolName = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?$/);
    fc.assert(
      fc.property(poolName, fc.bigInt({ min: 0n, max: MAX_INDEX }), (pool, n) => {
        const value = index(n);
        const read = indexValues.parseAllocationName(indexValues.allocationName(pool, value));
        expect(read).toEqual({ pool, value });
      }),
    );
  });

  it.each([
    { input: 64512, value: '64512', slot: 64512n },
    { input: '64512', value: '64512', slot: 64512n },
    { input: '0064512', value: '64512', slot: 64512n },
    { input: '9223372036854775806', value: '9223372036854775806', slot: MAX_INDEX },
  ])('parses $input canonically as $value', ({ input, value, slot }) => {
    expect(ok(indexValues.parse(input))).toEqual({ value, slot });
  });

  it.each([
    { input: '1..2', why: 'a range (a value is one integer)' },
    { input: -1, why: 'a negative number' },
    { input: 1.5, why: 'a fraction' },
    { input: '9223372036854775807', why: 'an index past the largest' },
    { input: null, why: 'null' },
  ])('does not parse $why as a value', ({ input }) => {
    expect(indexValues.parse(input).ok).toBe(false);
  });

  it.each([
    { n: 0n, spec: 0 },
    { n: 2n ** 53n - 1n, spec: Number.MAX_SAFE_INTEGER },
    { n: 2n ** 53n, spec: '9007199254740992' },
    { n: MAX_INDEX, spec: '9223372036854775806' },
  ])('writes index $n into an allocation spec as $spec', ({ n, spec }) => {
    expect(indexValues.specValue(index(n))).toBe(spec);
  });

  it('is the Index allocation kind', () => {
    expect(indexValues.allocationKind).toBe('Index');
  });
});

describe('indexPoolSpace.claimSegments', () => {
  const space: PoolSpace = indexPoolSpace([seg(64512n, 65534n), seg(4200000000n, 4294967294n)]);

  function claimSegments(within: unknown, reserved?: unknown): Segment[] {
    const result = space.claimSegments(within, reserved);
    if ('causes' in result) throw new Error(`expected segments, got ${JSON.stringify(result.causes)}`);
    return result.segments;
  }

  function claimCauses(within: unknown, reserved?: unknown): Cause[] {
    const result = space.claimSegments(within, reserved);
    if (!('causes' in result)) throw new Error('expected causes, got segments');
    return result.causes;
  }

  it.each([
    {
      within: undefined,
      segments: [seg(64512n, 65534n), seg(4200000000n, 4294967294n)],
      why: 'no within: every range',
    },
    { within: '65000..65100', segments: [seg(65000n, 65100n)], why: 'a window inside one range' },
    {
      within: '65000..4200000005',
      segments: [seg(65000n, 65534n), seg(4200000000n, 4200000005n)],
      why: 'a window across ranges',
    },
    { within: '65534', segments: [seg(65534n, 65534n)], why: 'a single index' },
    { within: '0..100', segments: [], why: 'a window outside the pool: no candidates' },
  ])('gives $why', ({ within, segments }) => {
    expect(claimSegments(within)).toEqual(segments);
  });

  it.each([
    { within: '2..1', why: 'a backwards range' },
    { within: '1..2..3', why: 'three bounds' },
    { within: 'abc', why: 'not a number' },
    { within: 65000, why: 'a JSON integer, not a range string' },
    { within: null, why: 'null' },
    { within: ['1..2'], why: 'a list' },
  ])('rejects $why on spec.within', ({ within }) => {
    const causes = claimCauses(within);
    expect(causes).toHaveLength(1);
    expect(causes[0]!.field).toBe('spec.within');
  });

  it('rejects reserved: it applies to IP pools only', () => {
    expect(claimCauses(undefined, ['65000'])).toEqual([
      { field: 'spec.reserved', message: 'applies to IP pools only' },
    ]);
  });

  it('reports a bad within and reserved together', () => {
    expect(claimCauses('2..1', []).map((cause) => cause.field)).toEqual(['spec.reserved', 'spec.within']);
  });

  it('takes its values back from slots', () => {
    expect(space.valueAt(64512n)).toEqual({ value: '64512', slot: 64512n });
    expect(space.fits(index(1))).toBe(true);
    expect(space.fits({ value: '10.0.0.1', slot: 1n, family: 4 })).toBe(false);
  });
});
