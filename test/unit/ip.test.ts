import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import type { Cause } from '../../lib/domain/errors.ts';
import { ok, checked, causesOf } from '../helpers/results.ts';
import type { Segment } from '../../lib/domain/values/candidates.ts';
import type { ParsedValue, PoolSpace } from '../../lib/domain/values/values.ts';
import {
  checkIPAddressPoolSpec,
  formatAddress,
  ipAddressValues,
  ipPrefixValues,
  type Family,
} from '../../lib/domain/values/ip.ts';
import { checkIPPrefixPoolSpec } from '../../lib/domain/values/prefix-pools.ts';

function claimSegments(space: PoolSpace, within: unknown, reserved?: unknown): Segment[] {
  const result = space.claimSegments(within, reserved);
  if ('causes' in result) throw new Error(`expected segments, got ${JSON.stringify(result.causes)}`);
  return result.segments;
}

function claimCauses(space: PoolSpace, within: unknown, reserved?: unknown): Cause[] {
  const result = space.claimSegments(within, reserved);
  if (!('causes' in result)) throw new Error('expected causes, got segments');
  return result.causes;
}

/** Every slot of the segments, in order: only for small pools. */
function enumerate(segments: readonly Segment[]): bigint[] {
  const slots: bigint[] = [];
  for (const { first, last } of segments) for (let slot = first; slot <= last; slot++) slots.push(slot);
  return slots;
}

function values(space: PoolSpace, segments: readonly Segment[] = space.segments): string[] {
  return enumerate(segments).map((slot) => space.valueAt(slot).value);
}

function firstAndLast(space: PoolSpace): [string, string] {
  const first = space.segments[0]!.first;
  const last = space.segments[space.segments.length - 1]!.last;
  return [space.valueAt(first).value, space.valueAt(last).value];
}

const address = (text: string): ParsedValue => ok(ipAddressValues.parse(text));
const prefix = (text: string): ParsedValue => ok(ipPrefixValues.parse(text));

describe('addresses', () => {
  it.each([
    { input: '10.42.1.7', canonical: '10.42.1.7', family: 4, slot: 0x0a2a0107n },
    { input: '0.0.0.0', canonical: '0.0.0.0', family: 4, slot: 0n },
    { input: '255.255.255.255', canonical: '255.255.255.255', family: 4, slot: 0xffffffffn },
    {
      input: '2001:DB8:0::1',
      canonical: '2001:db8::1',
      family: 6,
      slot: 0x20010db8000000000000000000000001n,
    },
    { input: '2001:db8::1', canonical: '2001:db8::1', family: 6, slot: 0x20010db8000000000000000000000001n },
    {
      input: '2001:0db8:0000:0000:0000:0000:0000:0001',
      canonical: '2001:db8::1',
      family: 6,
      slot: (0x20010db8n << 96n) | 1n,
    },
    { input: '::', canonical: '::', family: 6, slot: 0n },
    { input: '::1', canonical: '::1', family: 6, slot: 1n },
    {
      input: 'FFFF:ffff:FFFF:ffff:FFFF:ffff:FFFF:ffff',
      canonical: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      family: 6,
      slot: 2n ** 128n - 1n,
    },
    // The longest zero run is compressed, the first one on a tie, a lone zero group never.
    {
      input: '1:0:0:1:0:0:0:1',
      canonical: '1:0:0:1::1',
      family: 6,
      slot: 0x00010000000000010000000000000001n,
    },
    {
      input: '1:0:0:1:0:0:1:1',
      canonical: '1::1:0:0:1:1',
      family: 6,
      slot: 0x00010000000000010000000000010001n,
    },
    {
      input: '2001:db8:0:1:1:1:1:1',
      canonical: '2001:db8:0:1:1:1:1:1',
      family: 6,
      slot: 0x20010db8000000010001000100010001n,
    },
    {
      input: '1:2:3:4:5:6:7::',
      canonical: '1:2:3:4:5:6:7:0',
      family: 6,
      slot: 0x00010002000300040005000600070000n,
    },
    // Dotted-quad tails are read, and written back in hex groups (IPv4-mapped included).
    { input: '::ffff:1.2.3.4', canonical: '::ffff:102:304', family: 6, slot: 0xffff01020304n },
    { input: '::FFFF:0102:0304', canonical: '::ffff:102:304', family: 6, slot: 0xffff01020304n },
    { input: '::1.2.3.4', canonical: '::102:304', family: 6, slot: 0x01020304n },
    {
      input: '64:ff9b::192.0.2.33',
      canonical: '64:ff9b::c000:221',
      family: 6,
      slot: (0x64ff9bn << 96n) | 0xc0000221n,
    },
    {
      input: '1:2:3:4:5:6:1.2.3.4',
      canonical: '1:2:3:4:5:6:102:304',
      family: 6,
      slot: 0x00010002000300040005000601020304n,
    },
  ])('reads $input as $canonical', ({ input, canonical, family, slot }) => {
    expect(ipAddressValues.parse(input)).toEqual({ ok: true, value: { value: canonical, slot, family } });
    expect(ok(ipAddressValues.parse(canonical)).value).toBe(canonical);
    expect(ipAddressValues.specValue(address(input))).toBe(canonical);
  });

  it('takes every spelling of one address as one value', () => {
    expect(address('2001:DB8:0::1')).toEqual(address('2001:db8::1'));
    expect(address('::ffff:1.2.3.4')).toEqual(address('::ffff:102:304'));
  });

  it.each([
    '010.0.0.1',
    '10.0.0.01',
    '1.2.3',
    '1.2.3.4.5',
    '0x1.2.3.4',
    ' 1.2.3.4',
    '1.2.3.4 ',
    '256.0.0.1',
    '1..2.3',
    '',
    '1.2.3.-4',
    '+1.2.3.4',
    '1.2.3.4/32',
    'fe80::1%eth0',
    'fe80::1%1',
    '1::2::3',
    ':::',
    ':1::',
    '1::2:',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:8::',
    '12345::',
    'g::1',
    '::ffff:010.0.0.1',
    '::ffff:1.2.3',
    '1.2.3.4::',
    '::1.2.3.4:1',
    '1:2:3:4:5:6:7:1.2.3.4',
    ' ::1',
  ])('rejects %j', (input) => {
    const result = ipAddressValues.parse(input);
    expect(result.ok).toBe(false);
  });

  it.each([167772161, null, undefined, {}, ['10.0.0.1']])('rejects the non-string %j', (input) => {
    expect(ipAddressValues.parse(input)).toEqual({ ok: false, problem: 'must be an IP address string' });
  });

  it('says why a leading zero or a zone id is refused', () => {
    expect(ipAddressValues.parse('010.0.0.1')).toMatchObject({
      problem: expect.stringContaining('leading zero'),
    });
    expect(ipAddressValues.parse('fe80::1%eth0')).toMatchObject({
      problem: expect.stringContaining('zone id'),
    });
  });
});

describe('prefixes', () => {
  it.each([
    { input: '10.0.0.5/24', canonical: '10.0.0.0/24', family: 4, length: 24, slot: 0x0a0000n },
    { input: '10.0.0.0/8', canonical: '10.0.0.0/8', family: 4, length: 8, slot: 10n },
    { input: '10.0.0.64/26', canonical: '10.0.0.64/26', family: 4, length: 26, slot: 0x0a000040n >> 6n },
    { input: '0.0.0.0/0', canonical: '0.0.0.0/0', family: 4, length: 0, slot: 0n },
    { input: '255.255.255.255/0', canonical: '0.0.0.0/0', family: 4, length: 0, slot: 0n },
    { input: '10.0.0.7/32', canonical: '10.0.0.7/32', family: 4, length: 32, slot: 0x0a000007n },
    { input: '10.0.0.7/31', canonical: '10.0.0.6/31', family: 4, length: 31, slot: 0x0a000006n >> 1n },
    { input: '2001:DB8::1/64', canonical: '2001:db8::/64', family: 6, length: 64, slot: 0x20010db800000000n },
    {
      input: '2001:db8:0:ffff::/48',
      canonical: '2001:db8::/48',
      family: 6,
      length: 48,
      slot: 0x20010db80000n,
    },
    { input: '::/0', canonical: '::/0', family: 6, length: 0, slot: 0n },
    {
      input: '2001:db8::1/128',
      canonical: '2001:db8::1/128',
      family: 6,
      length: 128,
      slot: (0x20010db8n << 96n) | 1n,
    },
    {
      input: '::ffff:10.0.0.1/120',
      canonical: '::ffff:a00:0/120',
      family: 6,
      length: 120,
      slot: 0xffff0a0000n,
    },
  ])('reads $input as $canonical', ({ input, canonical, family, length, slot }) => {
    expect(ipPrefixValues.parse(input)).toEqual({
      ok: true,
      value: { value: canonical, slot, family, length },
    });
    expect(ok(ipPrefixValues.parse(canonical)).value).toBe(canonical);
    expect(ipPrefixValues.specValue(prefix(input))).toBe(canonical);
  });

  it.each([
    '10.0.0.0/33',
    '10.0.0.0/024',
    '10.0.0.0/-1',
    '10.0.0.0/+8',
    '10.0.0.0/ 8',
    '10.0.0.0',
    '10.0.0.0/',
    '/24',
    '10.0.0.0/24/1',
    '010.0.0.0/8',
    '2001:db8::/129',
    '2001:db8::/064',
    'fe80::%eth0/64',
    'fe80::/64%eth0',
    42,
    null,
  ])('rejects %j', (input) => {
    expect(ipPrefixValues.parse(input).ok).toBe(false);
  });
});

describe('allocation names', () => {
  it.each([
    { pool: 'vpc-main', value: '10.42.1.7', name: 'vpc-main-10-42-1-7' },
    { pool: 'p', value: '0.0.0.0', name: 'p-0-0-0-0' },
    { pool: 'p', value: '255.255.255.255', name: 'p-255-255-255-255' },
    { pool: 'a-1', value: '10.0.0.1', name: 'a-1-10-0-0-1' },
    { pool: 'p', value: '2001:db8::1', name: 'p-2001-0db8-0000-0000-0000-0000-0000-0001' },
    { pool: 'v6.pool', value: '::ffff:1.2.3.4', name: 'v6.pool-0000-0000-0000-0000-0000-ffff-0102-0304' },
    { pool: 'x-abcd', value: '::', name: 'x-abcd-0000-0000-0000-0000-0000-0000-0000-0000' },
  ])('names $value in $pool $name', ({ pool, value, name }) => {
    expect(ipAddressValues.allocationName(pool, address(value))).toBe(name);
    expect(ipAddressValues.parseAllocationName(name)).toEqual({ pool, value: address(value) });
  });

  it.each([
    { pool: 'p', value: '10.0.0.64/26', name: 'p-10-0-0-64-26' },
    { pool: 'p', value: '0.0.0.0/0', name: 'p-0-0-0-0-0' },
    { pool: 'p', value: '10.0.0.7/32', name: 'p-10-0-0-7-32' },
    { pool: 'p', value: '2001:db8::/48', name: 'p-2001-0db8-0000-0000-0000-0000-0000-0000-48' },
    { pool: 'p-7', value: '2001:db8::1/128', name: 'p-7-2001-0db8-0000-0000-0000-0000-0000-0001-128' },
  ])('names $value in $pool $name', ({ pool, value, name }) => {
    expect(ipPrefixValues.allocationName(pool, prefix(value))).toBe(name);
    expect(ipPrefixValues.parseAllocationName(name)).toEqual({ pool, value: prefix(value) });
  });

  it.each([
    'p-10-42-1-007',
    'p-10-42-01-7',
    'p-256-0-0-1',
    'p-10-42-1',
    '10-42-1-7',
    '-10-42-1-7',
    'p-0001-2-3-4',
    'p-2001-0DB8-0000-0000-0000-0000-0000-0001',
    'p-2001-0db8-0000-0000-0000-0000-0001',
    '2001-0db8-0000-0000-0000-0000-0000-0001',
    'p-2001-0db8-0000-0000-0000-0000-0000-00001',
    'p-2001-0db8-0000-0000-0000-0000-0000-001',
    'p',
    '',
  ])('reads %j as no address name', (name) => {
    expect(ipAddressValues.parseAllocationName(name)).toBeUndefined();
  });

  it.each([
    'p-10-0-0-64-026',
    'p-10-0-0-65-26',
    'p-10-0-0-0-33',
    'p-10-0-0-64',
    'p-10-0-0-64-',
    'p-2001-0db8-0000-0000-0000-0000-0000-0001-64',
    'p-2001-0db8-0000-0000-0000-0000-0000-0000-129',
    '10-0-0-64-26',
  ])('reads %j as no prefix name', (name) => {
    expect(ipPrefixValues.parseAllocationName(name)).toBeUndefined();
  });
});

describe('IPAddressPool', () => {
  it('leaves out gateway, exclusions, network and broadcast (the PiVirt pool)', () => {
    const pool = checked(
      checkIPAddressPoolSpec({
        prefixes: ['203.0.113.0/24'],
        gateway: '203.0.113.1',
        exclude: ['203.0.113.2', '203.0.113.3'],
        excludeNetworkAndBroadcast: true,
      }),
    );
    expect(pool.spec).toEqual({
      prefixes: ['203.0.113.0/24'],
      gateway: '203.0.113.1',
      exclude: ['203.0.113.2', '203.0.113.3'],
      excludeNetworkAndBroadcast: true,
    });
    expect(pool.space.kind).toBe('IPAddressPool');
    // 256 addresses less .0, .255, the gateway .1 and the exclusions .2 and .3: .4 to .254, 251 of them.
    expect(pool.space.total.toString()).toBe('251');
    expect(firstAndLast(pool.space)).toEqual(['203.0.113.4', '203.0.113.254']);
  });

  it('echoes the spec canonically, and only the optional fields given', () => {
    const pool = checked(
      checkIPAddressPoolSpec({
        prefixes: ['10.0.0.5/24', '10.0.1.9/24'],
        exclude: ['10.0.0.17/30', '10.0.1.9'],
        gateway: '10.0.0.1',
      }),
    );
    expect(pool.spec).toEqual({
      prefixes: ['10.0.0.0/24', '10.0.1.0/24'],
      exclude: ['10.0.0.16/30', '10.0.1.9'],
      gateway: '10.0.0.1',
    });
    expect(pool.space.total).toBe(512n - 4n - 1n - 1n);
    expect(checked(checkIPAddressPoolSpec({ prefixes: ['2001:DB8:0::/126'] })).spec).toEqual({
      prefixes: ['2001:db8::/126'],
    });
  });

  it('keeps spec order across prefixes, ascending inside each', () => {
    const pool = checked(checkIPAddressPoolSpec({ prefixes: ['10.0.1.0/31', '10.0.0.0/31', '10.0.2.0/32'] }));
    expect(values(pool.space)).toEqual(['10.0.1.0', '10.0.1.1', '10.0.0.0', '10.0.0.1', '10.0.2.0']);
  });

  it('counts a /64 without listing it', () => {
    const pool = checked(checkIPAddressPoolSpec({ prefixes: ['2001:db8:0:1::/64'] }));
    expect(pool.space.total).toBe(18446744073709551616n);
    expect(firstAndLast(pool.space)).toEqual(['2001:db8:0:1::', '2001:db8:0:1:ffff:ffff:ffff:ffff']);
    const edges = checked(
      checkIPAddressPoolSpec({ prefixes: ['2001:db8:0:1::/64'], excludeNetworkAndBroadcast: true }),
    );
    expect(edges.space.total).toBe(18446744073709551615n);
    expect(firstAndLast(edges.space)).toEqual(['2001:db8:0:1::1', '2001:db8:0:1:ffff:ffff:ffff:ffff']);
  });

  it.each([
    {
      prefix: '10.0.0.0/30',
      all: ['10.0.0.0', '10.0.0.1', '10.0.0.2', '10.0.0.3'],
      edgesOff: ['10.0.0.1', '10.0.0.2'],
    },
    { prefix: '10.0.0.0/31', all: ['10.0.0.0', '10.0.0.1'], edgesOff: ['10.0.0.0', '10.0.0.1'] },
    { prefix: '10.0.0.9/32', all: ['10.0.0.9'], edgesOff: ['10.0.0.9'] },
    {
      prefix: '2001:db8::/126',
      all: ['2001:db8::', '2001:db8::1', '2001:db8::2', '2001:db8::3'],
      edgesOff: ['2001:db8::1', '2001:db8::2', '2001:db8::3'],
    },
    { prefix: '2001:db8::/127', all: ['2001:db8::', '2001:db8::1'], edgesOff: ['2001:db8::', '2001:db8::1'] },
    { prefix: '2001:db8::5/128', all: ['2001:db8::5'], edgesOff: ['2001:db8::5'] },
  ])('holds $all in $prefix, $edgesOff without network and broadcast', ({ prefix: cidr, all, edgesOff }) => {
    const plain = checked(checkIPAddressPoolSpec({ prefixes: [cidr] })).space;
    expect(values(plain)).toEqual(all);
    expect(plain.total).toBe(BigInt(all.length));
    const edges = checked(
      checkIPAddressPoolSpec({ prefixes: [cidr], excludeNetworkAndBroadcast: true }),
    ).space;
    expect(values(edges)).toEqual(edgesOff);
    expect(edges.total).toBe(BigInt(edgesOff.length));
  });

  it('turns slots back into values and fits only its own family', () => {
    const v4 = checked(checkIPAddressPoolSpec({ prefixes: ['10.0.0.0/24'] })).space;
    expect(v4.valueAt(0x0a000007n)).toEqual(address('10.0.0.7'));
    expect(v4.fits(address('10.9.9.9'))).toBe(true);
    expect(v4.fits(address('2001:db8::1'))).toBe(false);
    expect(v4.fits(prefix('10.0.0.7/32'))).toBe(false);
    const v6 = checked(checkIPAddressPoolSpec({ prefixes: ['2001:db8::/64'] })).space;
    expect(v6.valueAt((0x20010db8n << 96n) | 7n)).toEqual(address('2001:db8::7'));
    expect(v6.fits(address('2001:db8::1'))).toBe(true);
    expect(v6.fits(address('10.0.0.1'))).toBe(false);
  });

  it.each([
    { name: 'missing prefixes', spec: {}, field: 'spec.prefixes', message: 'at least one' },
    { name: 'no prefixes', spec: { prefixes: [] }, field: 'spec.prefixes', message: 'at least one' },
    {
      name: 'prefixes not a list',
      spec: { prefixes: '10.0.0.0/24' },
      field: 'spec.prefixes',
      message: 'list',
    },
    {
      name: 'too many prefixes',
      spec: { prefixes: Array.from({ length: 1001 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`) },
      field: 'spec.prefixes',
      message: 'at most 1000',
    },
    {
      name: 'a malformed prefix',
      spec: { prefixes: ['10.0.0.0/24', 'nope'] },
      field: 'spec.prefixes[1]',
      message: 'nope',
    },
    { name: 'a bare address', spec: { prefixes: ['10.0.0.1'] }, field: 'spec.prefixes[0]', message: 'CIDR' },
    {
      name: 'leading zeros',
      spec: { prefixes: ['010.0.0.0/8'] },
      field: 'spec.prefixes[0]',
      message: 'leading zero',
    },
    {
      name: 'mixed families',
      spec: { prefixes: ['10.0.0.0/24', '2001:db8::/64'] },
      field: 'spec.prefixes[1]',
      message:
        'spec.prefixes[1] (2001:db8::/64) is IPv6 but spec.prefixes[0] (10.0.0.0/24) is IPv4; a pool holds one family',
    },
    {
      name: 'identical prefixes once masked',
      spec: { prefixes: ['10.0.0.0/24', '10.0.0.5/24'] },
      field: 'spec.prefixes[1]',
      message: 'spec.prefixes[1] (10.0.0.0/24) overlaps with spec.prefixes[0] (10.0.0.0/24)',
    },
    {
      name: 'a nested prefix',
      spec: { prefixes: ['10.0.0.0/16', '10.0.5.0/24'] },
      field: 'spec.prefixes[1]',
      message: 'spec.prefixes[1] (10.0.5.0/24) overlaps with spec.prefixes[0] (10.0.0.0/16)',
    },
    {
      name: 'a nesting prefix',
      spec: { prefixes: ['10.0.5.0/24', '10.1.0.0/24', '10.0.0.0/16'] },
      field: 'spec.prefixes[2]',
      message: 'spec.prefixes[2] (10.0.0.0/16) overlaps with spec.prefixes[0] (10.0.5.0/24)',
    },
    {
      name: 'overlapping IPv6 prefixes',
      spec: { prefixes: ['2001:db8::/48', '2001:DB8:0:1::/64'] },
      field: 'spec.prefixes[1]',
      message: 'spec.prefixes[1] (2001:db8:0:1::/64) overlaps with spec.prefixes[0] (2001:db8::/48)',
    },
    {
      name: 'exclude not a list',
      spec: { prefixes: ['10.0.0.0/24'], exclude: '10.0.0.1' },
      field: 'spec.exclude',
      message: 'list',
    },
    {
      name: 'a malformed exclusion',
      spec: { prefixes: ['10.0.0.0/24'], exclude: ['10.0.0.1', 'x'] },
      field: 'spec.exclude[1]',
      message: '"x"',
    },
    {
      name: 'a numeric exclusion',
      spec: { prefixes: ['10.0.0.0/24'], exclude: [7] },
      field: 'spec.exclude[0]',
      message: 'address or a CIDR',
    },
    {
      name: 'an exclusion outside the pool',
      spec: { prefixes: ['10.0.0.0/24'], exclude: ['10.0.1.1'] },
      field: 'spec.exclude[0]',
      message: '10.0.1.1 is not inside any of spec.prefixes',
    },
    {
      name: 'an exclusion wider than its prefix',
      spec: { prefixes: ['10.0.0.0/24'], exclude: ['10.0.0.0/23'] },
      field: 'spec.exclude[0]',
      message: '10.0.0.0/23 is not inside any of spec.prefixes',
    },
    {
      name: 'an exclusion of the other family',
      spec: { prefixes: ['10.0.0.0/24'], exclude: ['2001:db8::1'] },
      field: 'spec.exclude[0]',
      message: '2001:db8::1 is IPv6 but the pool is IPv4',
    },
    {
      name: 'a malformed gateway',
      spec: { prefixes: ['10.0.0.0/24'], gateway: '010.0.0.1' },
      field: 'spec.gateway',
      message: 'leading zero',
    },
    {
      name: 'a CIDR gateway',
      spec: { prefixes: ['10.0.0.0/24'], gateway: '10.0.0.1/24' },
      field: 'spec.gateway',
      message: 'IPv4',
    },
    {
      name: 'a gateway outside the pool',
      spec: { prefixes: ['2001:db8::/64'], gateway: '2001:db8:1::1' },
      field: 'spec.gateway',
      message: '2001:db8:1::1 is not inside any of spec.prefixes',
    },
    {
      name: 'a gateway of the other family',
      spec: { prefixes: ['2001:db8::/64'], gateway: '10.0.0.1' },
      field: 'spec.gateway',
      message: '10.0.0.1 is IPv4 but the pool is IPv6',
    },
    {
      name: 'a non-boolean excludeNetworkAndBroadcast',
      spec: { prefixes: ['10.0.0.0/24'], excludeNetworkAndBroadcast: 'true' },
      field: 'spec.excludeNetworkAndBroadcast',
      message: 'true or false',
    },
  ])('refuses $name', ({ spec, field, message }) => {
    const causes = causesOf(checkIPAddressPoolSpec(spec));
    expect(causes).toHaveLength(1);
    expect(causes[0]!.field).toBe(field);
    expect(causes[0]!.message).toContain(message);
  });

  it('names every failing field at once', () => {
    const causes = causesOf(
      checkIPAddressPoolSpec({
        prefixes: ['10.0.0.0/24', 'bad'],
        exclude: ['also-bad'],
        gateway: 7,
        excludeNetworkAndBroadcast: 1,
      }),
    );
    expect(causes.map((cause) => cause.field)).toEqual([
      'spec.prefixes[1]',
      'spec.exclude[0]',
      'spec.gateway',
      'spec.excludeNetworkAndBroadcast',
    ]);
  });

  describe('claims', () => {
    const subnet = checked(
      checkIPAddressPoolSpec({ prefixes: ['10.0.0.0/24', '10.0.1.0/24'], excludeNetworkAndBroadcast: true }),
    ).space;

    it('takes every candidate without within or reserved', () => {
      expect(claimSegments(subnet, undefined)).toEqual(subnet.segments);
    });

    it.each([
      { within: '10.0.0.16/28', first: '10.0.0.17', last: '10.0.0.30', count: 14 },
      { within: '10.0.0.17/28', first: '10.0.0.17', last: '10.0.0.30', count: 14 },
      { within: '10.0.1.0/24', first: '10.0.1.1', last: '10.0.1.254', count: 254 },
      { within: '10.0.0.8/31', first: '10.0.0.8', last: '10.0.0.9', count: 2 },
      { within: '10.0.0.255/32', first: undefined, last: undefined, count: 0 },
      { within: '10.0.0.7/32', first: '10.0.0.7', last: '10.0.0.7', count: 1 },
    ])('narrows to $within, its own network and broadcast left out', ({ within, first, last, count }) => {
      const candidates = values(subnet, claimSegments(subnet, within));
      expect(candidates).toHaveLength(count);
      expect(candidates[0]).toBe(first);
      expect(candidates[candidates.length - 1]).toBe(last);
    });

    it('leaves out only the first address of an IPv6 within', () => {
      const v6 = checked(
        checkIPAddressPoolSpec({ prefixes: ['2001:db8::/64'], excludeNetworkAndBroadcast: true }),
      ).space;
      const candidates = values(v6, claimSegments(v6, '2001:db8::100/120'));
      expect(candidates).toHaveLength(255);
      expect(candidates[0]).toBe('2001:db8::101');
      expect(candidates[254]).toBe('2001:db8::1ff');
    });

    it('keeps network and broadcast of within when the pool does', () => {
      const plain = checked(checkIPAddressPoolSpec({ prefixes: ['10.0.0.0/24'] })).space;
      expect(values(plain, claimSegments(plain, '10.0.0.16/30'))).toEqual([
        '10.0.0.16',
        '10.0.0.17',
        '10.0.0.18',
        '10.0.0.19',
      ]);
    });

    it('leaves out reserved addresses', () => {
      const candidates = values(
        subnet,
        claimSegments(subnet, '10.0.0.0/29', ['10.0.0.1', '10.0.0.3', '10.9.9.9']),
      );
      expect(candidates).toEqual(['10.0.0.2', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    });

    it.each([
      { within: 'x', reserved: undefined, field: 'spec.within', message: '"x"' },
      { within: 5, reserved: undefined, field: 'spec.within', message: 'CIDR' },
      { within: '10.0.0.1', reserved: undefined, field: 'spec.within', message: 'CIDR' },
      {
        within: '10.0.2.0/28',
        reserved: undefined,
        field: 'spec.within',
        message: 'not inside any of spec.prefixes',
      },
      {
        within: '10.0.0.0/23',
        reserved: undefined,
        field: 'spec.within',
        message: 'not inside any of spec.prefixes',
      },
      {
        within: '2001:db8::/64',
        reserved: undefined,
        field: 'spec.within',
        message: 'is IPv6 but the pool is IPv4',
      },
      { within: undefined, reserved: '10.0.0.1', field: 'spec.reserved', message: 'list' },
      { within: undefined, reserved: ['10.0.0.1', 'bad'], field: 'spec.reserved[1]', message: '"bad"' },
      {
        within: undefined,
        reserved: ['2001:db8::1'],
        field: 'spec.reserved[0]',
        message: 'is IPv6 but the pool is IPv4',
      },
    ])('refuses within $within, reserved $reserved', ({ within, reserved, field, message }) => {
      const causes = claimCauses(subnet, within, reserved);
      expect(causes).toHaveLength(1);
      expect(causes[0]!.field).toBe(field);
      expect(causes[0]!.message).toContain(message);
    });
  });
});

describe('IPPrefixPool', () => {
  it('counts a /48 of /64s', () => {
    const pool = checked(checkIPPrefixPoolSpec({ prefixes: ['2001:DB8::/48'], allocationPrefixLength: 64 }));
    expect(pool.spec).toEqual({ prefixes: ['2001:db8::/48'], allocationPrefixLength: 64 });
    expect(pool.space.kind).toBe('IPPrefixPool');
    expect(pool.space.total).toBe(65536n);
    expect(firstAndLast(pool.space)).toEqual(['2001:db8::/64', '2001:db8:0:ffff::/64']);
  });

  it('counts a /32 of /64s as one segment', () => {
    const pool = checked(checkIPPrefixPoolSpec({ prefixes: ['2001:db8::/32'], allocationPrefixLength: 64 }));
    expect(pool.space.segments).toHaveLength(1);
    expect(pool.space.total).toBe(2n ** 32n);
  });

  it.each([
    {
      prefix: '10.0.0.0/24',
      length: 26,
      expected: ['10.0.0.0/26', '10.0.0.64/26', '10.0.0.128/26', '10.0.0.192/26'],
    },
    {
      prefix: '10.0.0.0/30',
      length: 32,
      expected: ['10.0.0.0/32', '10.0.0.1/32', '10.0.0.2/32', '10.0.0.3/32'],
    },
    { prefix: '10.0.0.4/31', length: 32, expected: ['10.0.0.4/32', '10.0.0.5/32'] },
    { prefix: '0.0.0.0/0', length: 2, expected: ['0.0.0.0/2', '64.0.0.0/2', '128.0.0.0/2', '192.0.0.0/2'] },
    {
      prefix: '2001:db8::/126',
      length: 128,
      expected: ['2001:db8::/128', '2001:db8::1/128', '2001:db8::2/128', '2001:db8::3/128'],
    },
    { prefix: '2001:db8::/127', length: 128, expected: ['2001:db8::/128', '2001:db8::1/128'] },
    {
      prefix: '2001:db8::/124',
      length: 126,
      expected: ['2001:db8::/126', '2001:db8::4/126', '2001:db8::8/126', '2001:db8::c/126'],
    },
  ])('splits $prefix into /$length', ({ prefix: cidr, length, expected }) => {
    const space = checked(checkIPPrefixPoolSpec({ prefixes: [cidr], allocationPrefixLength: length })).space;
    expect(values(space)).toEqual(expected);
    expect(space.total).toBe(BigInt(expected.length));
  });

  it('keeps spec order across prefixes', () => {
    const space = checked(
      checkIPPrefixPoolSpec({ prefixes: ['10.0.1.0/25', '10.0.0.0/25'], allocationPrefixLength: 26 }),
    ).space;
    expect(values(space)).toEqual(['10.0.1.0/26', '10.0.1.64/26', '10.0.0.0/26', '10.0.0.64/26']);
  });

  it('fits only prefixes of its family and length', () => {
    const space = checked(
      checkIPPrefixPoolSpec({ prefixes: ['10.0.0.0/16'], allocationPrefixLength: 24 }),
    ).space;
    expect(space.valueAt(0x0a0005n)).toEqual(prefix('10.0.5.0/24'));
    expect(space.fits(prefix('10.0.5.0/24'))).toBe(true);
    expect(space.fits(prefix('10.0.5.0/25'))).toBe(false);
    expect(space.fits(prefix('2001:db8::/24'))).toBe(false);
    expect(space.fits(address('10.0.5.0'))).toBe(false);
  });

  it.each([
    {
      name: 'a malformed prefix',
      spec: { prefixes: ['10.0.0.0/33'], allocationPrefixLength: 24 },
      field: 'spec.prefixes[0]',
      message: '0..32',
    },
    {
      name: 'overlapping prefixes',
      spec: { prefixes: ['10.0.0.0/8', '10.0.0.0/16'], allocationPrefixLength: 24 },
      field: 'spec.prefixes[1]',
      message: 'spec.prefixes[1] (10.0.0.0/16) overlaps with spec.prefixes[0] (10.0.0.0/8)',
    },
    {
      name: 'a missing allocationPrefixLength',
      spec: { prefixes: ['10.0.0.0/16'] },
      field: 'spec.allocationPrefixLength',
      message: 'required',
    },
    {
      name: 'a string length',
      spec: { prefixes: ['10.0.0.0/16'], allocationPrefixLength: '24' },
      field: 'spec.allocationPrefixLength',
      message: 'integer',
    },
    {
      name: 'a fractional length',
      spec: { prefixes: ['10.0.0.0/16'], allocationPrefixLength: 24.5 },
      field: 'spec.allocationPrefixLength',
      message: 'integer',
    },
    {
      name: 'a zero length',
      spec: { prefixes: ['10.0.0.0/16'], allocationPrefixLength: 0 },
      field: 'spec.allocationPrefixLength',
      message: 'integer',
    },
    {
      name: 'a length past /32',
      spec: { prefixes: ['10.0.0.0/16'], allocationPrefixLength: 33 },
      field: 'spec.allocationPrefixLength',
      message: 'at most 32 for an IPv4 pool',
    },
    {
      name: 'a length past /128',
      spec: { prefixes: ['2001:db8::/48'], allocationPrefixLength: 129 },
      field: 'spec.allocationPrefixLength',
      message: '1..128',
    },
    {
      name: 'a length no longer than a prefix',
      spec: { prefixes: ['10.0.0.0/16', '10.1.0.0/24'], allocationPrefixLength: 24 },
      field: 'spec.allocationPrefixLength',
      message: 'must be longer than every prefix: spec.prefixes[1] (10.1.0.0/24) is /24',
    },
    {
      name: 'a length shorter than an IPv6 prefix',
      spec: { prefixes: ['2001:db8::/64'], allocationPrefixLength: 48 },
      field: 'spec.allocationPrefixLength',
      message: 'spec.prefixes[0] (2001:db8::/64) is /64',
    },
  ])('refuses $name', ({ spec, field, message }) => {
    const causes = causesOf(checkIPPrefixPoolSpec(spec));
    expect(causes).toHaveLength(1);
    expect(causes[0]!.field).toBe(field);
    expect(causes[0]!.message).toContain(message);
  });

  describe('claims', () => {
    const space = checked(
      checkIPPrefixPoolSpec({ prefixes: ['10.0.0.0/16'], allocationPrefixLength: 24 }),
    ).space;

    it.each([
      { within: '10.0.4.0/22', expected: ['10.0.4.0/24', '10.0.5.0/24', '10.0.6.0/24', '10.0.7.0/24'] },
      { within: '10.0.5.9/22', expected: ['10.0.4.0/24', '10.0.5.0/24', '10.0.6.0/24', '10.0.7.0/24'] },
      { within: '10.0.9.0/24', expected: ['10.0.9.0/24'] },
    ])('narrows to the sub-prefixes inside $within', ({ within, expected }) => {
      expect(values(space, claimSegments(space, within))).toEqual(expected);
    });

    it.each([
      {
        within: '10.0.4.0/25',
        reserved: undefined,
        field: 'spec.within',
        message: 'longer than allocationPrefixLength 24',
      },
      {
        within: '10.1.0.0/20',
        reserved: undefined,
        field: 'spec.within',
        message: 'not inside any of spec.prefixes',
      },
      {
        within: '2001:db8::/64',
        reserved: undefined,
        field: 'spec.within',
        message: 'is IPv6 but the pool is IPv4',
      },
      { within: '10.0.4.0', reserved: undefined, field: 'spec.within', message: 'CIDR' },
      {
        within: undefined,
        reserved: ['10.0.0.1'],
        field: 'spec.reserved',
        message: 'applies to IPAddressPool only',
      },
    ])('refuses within $within, reserved $reserved', ({ within, reserved, field, message }) => {
      const causes = claimCauses(space, within, reserved);
      expect(causes).toEqual([{ field, message: expect.stringContaining(message) }]);
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// Properties

const ipv4Bits = fc.bigInt({ min: 0n, max: 2n ** 32n - 1n });
/** IPv6 groups, biased towards zero so `::` runs, ties and mapped addresses come up often. */
const ipv6Groups = fc.array(
  fc.oneof(fc.constant(0), fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff })),
  {
    minLength: 8,
    maxLength: 8,
  },
);
const groupsToBits = (groups: readonly number[]) =>
  groups.reduce((bits, group) => (bits << 16n) | BigInt(group), 0n);
const anyAddress = fc.oneof(
  ipv4Bits.map((bits) => ({ family: 4 as Family, bits })),
  ipv6Groups.map((groups) => ({ family: 6 as Family, bits: groupsToBits(groups) })),
);
const anyPrefix = anyAddress.chain((addr) =>
  fc.integer({ min: 0, max: addr.family === 4 ? 32 : 128 }).map((length) => ({ ...addr, length })),
);

/** One of the many RFC 4291 spellings of an address given as groups. */
interface Spelling {
  readonly upper: boolean;
  readonly pad: boolean;
  readonly dottedTail: boolean;
  readonly compressStart: number;
  readonly compressLength: number;
}
const spelling: fc.Arbitrary<Spelling> = fc.record({
  upper: fc.boolean(),
  pad: fc.boolean(),
  dottedTail: fc.boolean(),
  compressStart: fc.integer({ min: 0, max: 7 }),
  compressLength: fc.integer({ min: 0, max: 8 }),
});

function spell(groups: readonly number[], how: Spelling): string {
  const hex = groups.map((group) => {
    const text = how.pad ? group.toString(16).padStart(4, '0') : group.toString(16);
    return how.upper ? text.toUpperCase() : text;
  });
  const hexCount = how.dottedTail ? 6 : 8;
  const parts = hex.slice(0, hexCount);
  if (how.dottedTail) {
    parts.push(`${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`);
  }
  const end = how.compressStart + how.compressLength;
  const compressible =
    how.compressLength > 0 &&
    end <= hexCount &&
    groups.slice(how.compressStart, end).every((group) => group === 0);
  if (!compressible) return parts.join(':');
  return `${parts.slice(0, how.compressStart).join(':')}::${parts.slice(end).join(':')}`;
}

describe('properties', () => {
  it('reads every IPv4 dotted quad as itself', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }), (octets) => {
        const text = octets.join('.');
        const value = address(text);
        expect(value.value).toBe(text);
        expect(value.slot).toBe(octets.reduce((bits, octet) => (bits << 8n) | BigInt(octet), 0n));
      }),
    );
  });

  it('reads every IPv6 spelling as the one RFC 5952 form (ipaddr.js agrees)', () => {
    fc.assert(
      fc.property(ipv6Groups, spelling, (groups, how) => {
        const value = address(spell(groups, how));
        expect(value.slot).toBe(groupsToBits(groups));
        expect(value.family).toBe(6);
        expect(value.value).toBe(new ipaddr.IPv6(groups).toRFC5952String());
      }),
    );
  });

  it('writes canonical forms that read back as the same value (addresses)', () => {
    fc.assert(
      fc.property(anyAddress, (addr) => {
        const text = formatAddress(addr);
        const value = address(text);
        expect(value).toEqual({ value: text, slot: addr.bits, family: addr.family });
        expect(address(value.value)).toEqual(value);
      }),
    );
  });

  it('masks prefixes, and their canonical forms read back as the same value', () => {
    fc.assert(
      fc.property(anyPrefix, ({ family, bits, length }) => {
        const input = `${formatAddress({ family, bits })}/${length}`;
        const value = prefix(input);
        const width = family === 4 ? 32 : 128;
        const network = (bits >> BigInt(width - length)) << BigInt(width - length);
        const oracle =
          family === 4
            ? ipaddr.IPv4.networkAddressFromCIDR(input).toString()
            : ipaddr.IPv6.networkAddressFromCIDR(input).toRFC5952String();
        expect(value).toEqual({
          value: `${oracle}/${length}`,
          slot: network >> BigInt(width - length),
          family,
          length,
        });
        expect(prefix(value.value)).toEqual(value);
      }),
    );
  });

  const poolName = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?$/);

  it('reads every address allocation name back as its pool and value', () => {
    fc.assert(
      fc.property(poolName, anyAddress, (pool, addr) => {
        const value = address(formatAddress(addr));
        const name = ipAddressValues.allocationName(pool, value);
        expect(ipAddressValues.parseAllocationName(name)).toEqual({ pool, value });
      }),
    );
  });

  it('reads every prefix allocation name back as its pool and value', () => {
    fc.assert(
      fc.property(poolName, anyPrefix, (pool, { family, bits, length }) => {
        const value = prefix(`${formatAddress({ family, bits })}/${length}`);
        const name = ipPrefixValues.allocationName(pool, value);
        expect(ipPrefixValues.parseAllocationName(name)).toEqual({ pool, value });
      }),
    );
  });

  /** A small IPv4 address pool: up to 3 prefixes /24../30 in distinct /24s, with exclusions in them. */
  const smallPool = fc
    .record({
      blocks: fc.uniqueArray(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 3 }),
      lengths: fc.array(fc.integer({ min: 24, max: 30 }), { minLength: 3, maxLength: 3 }),
      offsets: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
      excludes: fc.array(
        fc.record({ prefix: fc.nat(), offset: fc.nat(), length: fc.integer({ min: 27, max: 33 }) }),
        {
          maxLength: 5,
        },
      ),
      gateway: fc.option(fc.record({ prefix: fc.nat(), offset: fc.nat() }), { nil: undefined }),
      excludeNetworkAndBroadcast: fc.boolean(),
      within: fc.record({ prefix: fc.nat(), offset: fc.nat(), extra: fc.integer({ min: 0, max: 8 }) }),
    })
    .map((seed) => {
      const prefixes = seed.blocks.map((block, i) => {
        const length = seed.lengths[i]!;
        const size = 2 ** (32 - length);
        const network = (10 << 24) + (block << 8) + (seed.offsets[i]! % (256 / size)) * size;
        return { network: BigInt(network), length, size: BigInt(size) };
      });
      const pick = (index: number) => prefixes[index % prefixes.length]!;
      const addressIn = (index: number, offset: number) => {
        const p = pick(index);
        return p.network + (BigInt(offset) % p.size);
      };
      // Length 33 stands for a bare address; shorter ones are CIDRs clipped to their prefix's length.
      const exclusions = seed.excludes.map(({ prefix: index, offset, length }) => {
        const bits = addressIn(index, offset);
        if (length === 33) return { text: formatAddress({ family: 4, bits }), first: bits, last: bits };
        const cidrLength = Math.max(length, pick(index).length);
        const size = 1n << BigInt(32 - cidrLength);
        const first = (bits / size) * size;
        return {
          text: `${formatAddress({ family: 4, bits })}/${cidrLength}`,
          first,
          last: first + size - 1n,
        };
      });
      const gateway = seed.gateway && addressIn(seed.gateway.prefix, seed.gateway.offset);
      const withinPrefix = pick(seed.within.prefix);
      const withinLength = Math.min(32, withinPrefix.length + seed.within.extra);
      const withinSize = 1n << BigInt(32 - withinLength);
      const withinFirst = (addressIn(seed.within.prefix, seed.within.offset) / withinSize) * withinSize;
      const within = { length: withinLength, first: withinFirst, last: withinFirst + withinSize - 1n };
      return {
        prefixes,
        exclusions,
        gateway,
        excludeNetworkAndBroadcast: seed.excludeNetworkAndBroadcast,
        within,
      };
    });

  type SmallPool = typeof smallPool extends fc.Arbitrary<infer T> ? T : never;

  function spec(pool: SmallPool): Record<string, unknown> {
    return {
      prefixes: pool.prefixes.map((p) => `${formatAddress({ family: 4, bits: p.network })}/${p.length}`),
      exclude: pool.exclusions.map((exclusion) => exclusion.text),
      ...(pool.gateway === undefined ? {} : { gateway: formatAddress({ family: 4, bits: pool.gateway }) }),
      excludeNetworkAndBroadcast: pool.excludeNetworkAndBroadcast,
    };
  }

  /** The contract's candidate rule, address by address. */
  function isCandidate(pool: SmallPool, bits: bigint, first: bigint, last: bigint, length: number): boolean {
    if (pool.exclusions.some((exclusion) => exclusion.first <= bits && bits <= exclusion.last)) return false;
    if (bits === pool.gateway) return false;
    return !(pool.excludeNetworkAndBroadcast && length <= 30 && (bits === first || bits === last));
  }

  it('lists candidates in order, inside their prefixes, outside every exclusion', () => {
    fc.assert(
      fc.property(smallPool, (pool) => {
        const space = checked(checkIPAddressPoolSpec(spec(pool))).space;
        const candidates = enumerate(space.segments);
        expect(BigInt(candidates.length)).toBe(space.total);

        // Grouped by prefix in spec order, strictly ascending inside each.
        let cursor = 0;
        const expected: bigint[] = [];
        for (const p of pool.prefixes) {
          const last = p.network + p.size - 1n;
          let previous = -1n;
          while (
            cursor < candidates.length &&
            candidates[cursor]! >= p.network &&
            candidates[cursor]! <= last
          ) {
            const bits = candidates[cursor]!;
            expect(bits).toBeGreaterThan(previous);
            expect(isCandidate(pool, bits, p.network, last, p.length)).toBe(true);
            previous = bits;
            cursor++;
          }
          for (let bits = p.network; bits <= last; bits++) {
            if (isCandidate(pool, bits, p.network, last, p.length)) expected.push(bits);
          }
        }
        expect(cursor).toBe(candidates.length);
        expect(candidates).toEqual(expected);
      }),
    );
  });

  it('narrows claims to within and away from reserved addresses, as the rule says', () => {
    fc.assert(
      fc.property(smallPool, fc.array(fc.nat(), { maxLength: 4 }), (pool, reservedOffsets) => {
        const space = checked(checkIPAddressPoolSpec(spec(pool))).space;
        const { within } = pool;
        const reserved = reservedOffsets.map(
          (offset) => within.first + (BigInt(offset) % (within.last - within.first + 1n)),
        );
        const withinText = `${formatAddress({ family: 4, bits: within.first })}/${within.length}`;
        const reservedText = reserved.map((bits) => formatAddress({ family: 4, bits }));
        const got = enumerate(claimSegments(space, withinText, reservedText));
        const expected = enumerate(space.segments).filter(
          (bits) =>
            bits >= within.first &&
            bits <= within.last &&
            !reserved.includes(bits) &&
            !(
              pool.excludeNetworkAndBroadcast &&
              within.length <= 30 &&
              (bits === within.first || bits === within.last)
            ),
        );
        expect(got).toEqual(expected);
      }),
    );
  });

  it('lists the aligned sub-prefixes of small prefix pools', () => {
    const smallPrefixPool = fc.record({
      blocks: fc.uniqueArray(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 3 }),
      lengths: fc.array(fc.integer({ min: 20, max: 26 }), { minLength: 3, maxLength: 3 }),
      longer: fc.integer({ min: 1, max: 4 }),
    });
    fc.assert(
      fc.property(smallPrefixPool, ({ blocks, lengths, longer }) => {
        const prefixes = blocks.map((block, i) => ({
          network: (10 << 24) + (block << 16),
          length: lengths[i]!,
        }));
        const allocationPrefixLength = Math.max(...prefixes.map((p) => p.length)) + longer;
        const space = checked(
          checkIPPrefixPoolSpec({
            prefixes: prefixes.map(
              (p) => `${formatAddress({ family: 4, bits: BigInt(p.network) })}/${p.length}`,
            ),
            allocationPrefixLength,
          }),
        ).space;
        const step = 2 ** (32 - allocationPrefixLength);
        const expected = prefixes.flatMap((p) =>
          Array.from(
            { length: 2 ** (allocationPrefixLength - p.length) },
            (_, i) =>
              `${formatAddress({ family: 4, bits: BigInt(p.network + i * step) })}/${allocationPrefixLength}`,
          ),
        );
        expect(values(space)).toEqual(expected);
        expect(space.total).toBe(BigInt(expected.length));
      }),
    );
  });
});
