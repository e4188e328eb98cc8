/**
 * A new claim is written while its pool is read (service/operations/claims.ts, newClaim) only when no pool
 * of its kind could refuse it: `fitsAnyPool`. These tests hold that to `checkClaimAgainstPool`, the check
 * a claim's create makes against its pool: a claim without `value`, `within`, `reserved` and
 * `prefixLength` passes it against any valid pool of its kind (whatever the ranges, prefixes, family,
 * lengths, exclusions or carving), and each of those four fields is refused by some pool.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClaimSpec, PoolRecord } from '../../lib/domain/objects/records.ts';
import { poolSpecChecker } from '../../lib/domain/values/spaces.ts';
import { checkClaimAgainstPool, fitsAnyPool } from '../../lib/service/operations/claims.ts';
import { API_VERSION } from '../helpers/allot.ts';

type Kind = PoolRecord['kind'];

function pool(kind: Kind, spec: Record<string, unknown>, carved?: string[]): PoolRecord {
  const checked = poolSpecChecker(kind)(spec);
  if ('causes' in checked) throw new Error(`not a valid ${kind} spec: ${JSON.stringify(checked.causes)}`);
  return {
    t: 'pool',
    kind,
    metadata: {
      name: 'p',
      namespace: 'default',
      uid: 'uid-p',
      generation: 1,
      creationTimestamp: new Date().toISOString(),
      labels: {},
      annotations: {},
    },
    spec: { ...checked.spec, reclaimPolicy: 'Recycle' },
    ...(carved ? { carved: { prefixes: carved, since: new Date().toISOString(), claimUid: 'c' } } : {}),
    rv: 1,
  };
}

const plain = (kind: Kind, owner = false): ClaimSpec => ({
  poolRef: { apiVersion: API_VERSION, kind, name: 'p' },
  ...(owner ? { owner: { kind: 'Machine', name: 'm', uid: 'u' } } : {}),
});

const octet = fc.integer({ min: 0, max: 255 });
const v4Prefix = (length: fc.Arbitrary<number>) =>
  fc.tuple(octet, octet, octet, octet, length).map(([a, b, c, d, l]) => {
    const bits = (((a << 24) | (b << 16) | (c << 8) | d) >>> 0) & (l === 0 ? 0 : (~0 << (32 - l)) >>> 0);
    return `${bits >>> 24}.${(bits >>> 16) & 255}.${(bits >>> 8) & 255}.${bits & 255}/${l}`;
  });

const pools: fc.Arbitrary<PoolRecord> = fc.oneof(
  fc
    .tuple(
      fc.array(fc.tuple(fc.bigInt({ min: 0n, max: 2n ** 60n }), fc.bigInt({ min: 0n, max: 1000n })), {
        minLength: 1,
        maxLength: 4,
      }),
      fc.boolean(),
    )
    .map(([pairs, reversed]) => {
      // Disjoint ranges, ascending or not (spec order is candidate order).
      let next = 0n;
      const ranges = pairs.map(([gap, width]) => {
        const first = next + gap;
        next = first + width + 1n;
        return `${first}..${first + width}`;
      });
      return pool('IndexPool', { ranges: reversed ? ranges.reverse() : ranges });
    }),
  fc
    .record({
      prefix: v4Prefix(fc.integer({ min: 16, max: 30 })),
      excludeNetworkAndBroadcast: fc.boolean(),
    })
    .map(({ prefix, excludeNetworkAndBroadcast }) =>
      pool('IPAddressPool', { prefixes: [prefix], excludeNetworkAndBroadcast }),
    ),
  fc
    .record({ prefix: v4Prefix(fc.integer({ min: 8, max: 20 })), extra: fc.integer({ min: 1, max: 8 }) })
    .map(({ prefix, extra }) => {
      const length = Number(prefix.split('/')[1]) + extra;
      return pool('IPPrefixPool', { prefixes: [prefix], allocationPrefixLength: length });
    }),
  fc
    .record({
      prefix: v4Prefix(fc.integer({ min: 8, max: 16 })),
      min: fc.integer({ min: 1, max: 4 }),
      span: fc.integer({ min: 0, max: 8 }),
      at: fc.integer({ min: 0, max: 8 }),
    })
    .map(({ prefix, min, span, at }) => {
      const base = Number(prefix.split('/')[1]);
      const lengths = { min: base + min, max: base + min + span, default: base + min + Math.min(at, span) };
      return pool('IPPrefixPool', { prefixes: [prefix], allocationPrefixLengths: lengths });
    }),
);

describe('a claim that fits any pool of its kind', () => {
  it('passes the check against every pool of its kind', () => {
    fc.assert(
      fc.property(pools, fc.boolean(), (record, owner) => {
        const spec = plain(record.kind, owner);
        expect(fitsAnyPool(spec)).toBe(true);
        expect(() => checkClaimAgainstPool(spec, record, 'c')).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it('passes it against IPv6 pools, pools with exclusions and a gateway, and carved pools', () => {
    const fixed = [
      pool('IPAddressPool', { prefixes: ['2001:db8::/64'] }),
      pool('IPAddressPool', {
        prefixes: ['10.0.0.0/24'],
        exclude: ['10.0.0.0/28'],
        gateway: '10.0.0.1',
        excludeNetworkAndBroadcast: true,
      }),
      pool('IPPrefixPool', { prefixes: ['2001:db8::/32'], allocationPrefixLength: 48 }),
      pool('IPPrefixPool', {
        prefixes: ['2001:db8::/32'],
        allocationPrefixLengths: { min: 40, max: 64, default: 48 },
      }),
      pool('IPAddressPool', { prefixesFrom: { claimRef: { name: 'vpc' } } }),
      pool('IPAddressPool', { prefixesFrom: { claimRef: { name: 'vpc' } } }, ['10.9.0.0/24']),
      pool('IPPrefixPool', { prefixesFrom: { claimRef: { name: 'vpc' } }, allocationPrefixLength: 28 }, [
        '10.9.0.0/24',
      ]),
    ];
    for (const record of fixed)
      expect(() => checkClaimAgainstPool(plain(record.kind), record, 'c'), record.kind).not.toThrow();
  });

  it('is one without value, within, reserved and prefixLength: each of them is refused by some pool', () => {
    const index = pool('IndexPool', { ranges: ['1..10'] });
    const addresses = pool('IPAddressPool', { prefixes: ['10.0.0.0/24'] });
    const prefixes = pool('IPPrefixPool', { prefixes: ['10.0.0.0/16'], allocationPrefixLength: 24 });
    const refused: [Partial<ClaimSpec>, PoolRecord][] = [
      [{ value: '2001:db8::1' }, addresses],
      [{ within: '10.1.0.0/24' }, addresses],
      [{ within: '20..30' }, pool('IPAddressPool', { prefixes: ['10.0.0.0/24'] })],
      [{ reserved: ['10.0.0.1'] }, index],
      [{ prefixLength: 26 }, prefixes],
    ];
    for (const [fields, record] of refused) {
      const spec = { ...plain(record.kind), ...fields };
      expect(fitsAnyPool(spec), JSON.stringify(fields)).toBe(false);
      expect(() => checkClaimAgainstPool(spec, record, 'c'), JSON.stringify(fields)).toThrow();
    }
  });
});
