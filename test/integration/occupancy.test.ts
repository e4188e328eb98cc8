/**
 * The occupancy route (the console's map): buckets of a pool's span with their candidates and held
 * values, counted from the group summaries; a /16, a 2^32 index pool, a /48 of /64s, the estimate for
 * spans with many used groups, bad queries, and what a map costs in requests (it grows with the
 * buckets, not with the pool).
 */
import { describe, expect, it } from 'vitest';
import type { LocalAllot } from '../../lib/local/server.ts';
import { API_VERSION, claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import { expectFailure } from './support.ts';

const { allot, api } = useTestAllot();

interface Bucket {
  first: string;
  last: string;
  within: string;
  values: string;
  size: string;
  held: string;
  approximate?: boolean;
}

async function occupancy(
  path: string,
): Promise<{ exact: boolean; bucketSize: string; within: string; buckets: Bucket[] }> {
  const answer = await api.get(path);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as any;
}

const heldOf = (buckets: Bucket[]) => buckets.reduce((sum, b) => sum + BigInt(b.held), 0n);

async function claimed(name: string, poolRef: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const answer = await api.post('claims', claim(name, poolRef, extra));
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.status.value as string;
}

/** The DynamoDB requests the server makes while `action` runs, once the stream is idle. */
async function requestsDuring(server: LocalAllot, action: () => Promise<unknown>): Promise<string[]> {
  await server.stream!.drained();
  const seen: string[] = [];
  const name = `count-${Math.random()}`;
  server.table.client.middlewareStack.add(
    (next, context) => async (args) => {
      seen.push(String(context.commandName).replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await action();
  } finally {
    server.table.client.middlewareStack.remove(name);
  }
  return seen.sort();
}

describe('the map of a /16', () => {
  it('has 256 /24 buckets, counts held and excluded addresses, and opens a /24 to its addresses', async () => {
    const pool = {
      apiVersion: API_VERSION,
      kind: 'IPAddressPool',
      metadata: { name: 'vpc-main' },
      spec: {
        prefixes: ['10.42.0.0/16'],
        excludeNetworkAndBroadcast: true,
        exclude: ['10.42.7.0/24', '10.42.1.9'],
      },
    };
    expect((await api.post('ipaddresspools', pool)).status).toBe(201);
    const ref = { kind: 'IPAddressPool', name: 'vpc-main' };
    for (const name of ['a', 'b', 'c']) await claimed(name, ref, { within: '10.42.1.0/24' });
    await claimed('d', ref, { value: '10.42.200.7' });
    const path = 'ipaddresspools/vpc-main/occupancy';
    const map = await eventually(async () => {
      const answer = await occupancy(path);
      expect(heldOf(answer.buckets)).toBe(4n);
      return answer;
    });
    expect(map).toMatchObject({ kind: 'Occupancy', within: '10.42.0.0/16', bucketSize: '256', exact: true });
    expect(map.buckets).toHaveLength(256);
    expect(map.buckets[0]).toEqual({
      first: '10.42.0.0',
      last: '10.42.0.255',
      within: '10.42.0.0/24',
      values: '256',
      size: '255', // the network address is left out
      held: '0',
    });
    expect(map.buckets[1]).toMatchObject({ within: '10.42.1.0/24', size: '255', held: '3' });
    expect(map.buckets[7]).toMatchObject({ within: '10.42.7.0/24', size: '0', held: '0' });
    expect(map.buckets[200]).toMatchObject({ within: '10.42.200.0/24', size: '256', held: '1' });
    expect(map.buckets[255]).toMatchObject({ within: '10.42.255.0/24', size: '255', held: '0' });

    const cell = await occupancy(`${path}?within=10.42.1.0/24`);
    expect(cell.bucketSize).toBe('1');
    expect(cell.buckets.filter((b) => b.held === '1').map((b) => b.first)).toEqual([
      '10.42.1.1', // a claim within a subnet leaves out the subnet's network address too
      '10.42.1.2',
      '10.42.1.3',
    ]);
    expect(cell.buckets[9]).toEqual({
      first: '10.42.1.9',
      last: '10.42.1.9',
      within: '10.42.1.9/32',
      values: '1',
      size: '0',
      held: '0',
    });
    const quarter = await occupancy(`${path}?within=10.42.0.0/16&buckets=4`);
    expect(quarter.buckets.map((b) => [b.within, b.held])).toEqual([
      ['10.42.0.0/18', '3'],
      ['10.42.64.0/18', '0'],
      ['10.42.128.0/18', '0'],
      ['10.42.192.0/18', '1'],
    ]);
    // buckets rounds down to a power of two for IP pools, so each bucket is a CIDR
    expect((await occupancy(`${path}?buckets=100`)).buckets).toHaveLength(64);
  });

  it('costs the pool read and one batched read of its 16 summaries', async () => {
    const requests = await requestsDuring(allot, () => occupancy('ipaddresspools/vpc-main/occupancy'));
    expect(requests).toEqual(['BatchGetItem', 'GetItem']);
  });
});

describe('the map of a 2^32 index pool', () => {
  it('counts values far apart without walking the span', async () => {
    expect((await api.post('indexpools', indexPool('vni', ['0..4294967295']))).status).toBe(201);
    const ref = { kind: 'IndexPool', name: 'vni' };
    expect(await claimed('first', ref)).toBe('0');
    expect(await claimed('second', ref)).toBe('1');
    await claimed('far', ref, { value: 3000000000 });
    await claimed('last', ref, { value: 4294967295 });
    const map = await eventually(async () => {
      const answer = await occupancy('indexpools/vni/occupancy');
      expect(heldOf(answer.buckets)).toBe(4n);
      return answer;
    });
    expect(map).toMatchObject({ within: '0..4294967295', bucketSize: '16777216', exact: true });
    expect(map.buckets).toHaveLength(256);
    const held = map.buckets.flatMap((b, i) => (b.held === '0' ? [] : [[i, b.within, b.held]]));
    expect(held).toEqual([
      [0, '0..16777215', '2'],
      [178, '2986344448..3003121663', '1'],
      [255, '4278190080..4294967295', '1'],
    ]);
    expect(map.buckets.every((b) => b.size === '16777216' && b.values === '16777216')).toBe(true);
  });

  it('costs the pool read, one directory Query and one batched read, whatever the buckets', async () => {
    for (const buckets of [16, 256, 4096]) {
      const requests = await requestsDuring(allot, () =>
        occupancy(`indexpools/vni/occupancy?buckets=${buckets}`),
      );
      expect(requests, `buckets=${buckets}`).toEqual(['BatchGetItem', 'GetItem', 'Query']);
    }
  });

  it('draws ranges with gaps: what lies between them is no candidate', async () => {
    expect(
      (await api.post('indexpools', indexPool('asn-pool', ['64512..65534', '4200000000..4294967294'])))
        .status,
    ).toBe(201);
    const run = await occupancy('indexpools/asn-pool/occupancy?within=64512..65534&buckets=64');
    expect(run.buckets).toHaveLength(64);
    expect(run.buckets[0]).toMatchObject({
      first: '64512',
      last: '64527',
      within: '64512..64527',
      size: '16',
    });
    expect(run.buckets[63]).toMatchObject({ first: '65520', last: '65534', values: '15', size: '15' });
    const hull = await occupancy('indexpools/asn-pool/occupancy?buckets=2');
    expect(hull.buckets.map((b) => b.size)).toEqual(['1023', '94967295']);
  });

  it('estimates a bucket with more used groups than it reads, and says so', async () => {
    expect((await api.post('indexpools', indexPool('spread', ['0..4294967295']))).status).toBe(201);
    const ref = { kind: 'IndexPool', name: 'spread' };
    // one value in each of 20 groups of 4096: more than a one-bucket map reads
    for (let group = 0; group < 20; group++) await claimed(`s${group}`, ref, { value: group * 4096 });
    const map = await eventually(async () => {
      const answer = await occupancy('indexpools/spread/occupancy?buckets=2');
      expect(answer.buckets[0]!.held).toBe('20');
      return answer;
    });
    expect(map.exact).toBe(false);
    expect(map.buckets[0]).toMatchObject({ held: '20', approximate: true });
    expect(map.buckets[1]).toEqual(expect.not.objectContaining({ approximate: true }));
    expect(map.buckets[1]!.held).toBe('0');
    // the first and last four groups, read in one batch; two Queries a bucket at most
    const requests = await requestsDuring(allot, () => occupancy('indexpools/spread/occupancy?buckets=2'));
    expect(requests).toEqual(['BatchGetItem', 'GetItem', 'Query', 'Query', 'Query', 'Query']);
    // buckets that share a group (widths that are no multiple of 4096) read it once, and stay close
    const shared = await occupancy('indexpools/spread/occupancy?within=0..77823&buckets=2');
    expect(shared.buckets.map((b) => b.approximate)).toEqual([true, true]);
    const truth = [10n, 9n]; // values 0, 4096, … 36864 | 40960, … 73728
    shared.buckets.forEach((bucket, i) => {
      const error = BigInt(bucket.held) - truth[i]!;
      expect(error * error, `bucket ${i}: ${bucket.held}`).toBeLessThanOrEqual(4n);
    });
    // with buckets enough, every used group is read: exact again
    const fine = await occupancy('indexpools/spread/occupancy?buckets=64');
    expect(fine.exact).toBe(true);
    expect(heldOf(fine.buckets)).toBe(20n);
  });
});

describe('the map of an IPv6 prefix pool', () => {
  it('draws a /48 of /64s as 256 /56 buckets', async () => {
    const pool = {
      apiVersion: API_VERSION,
      kind: 'IPPrefixPool',
      metadata: { name: 'v6-subnets' },
      spec: { prefixes: ['2001:db8::/48'], allocationPrefixLength: 64 },
    };
    expect((await api.post('ipprefixpools', pool)).status).toBe(201);
    expect(await claimed('rack1', { kind: 'IPPrefixPool', name: 'v6-subnets' })).toBe('2001:db8::/64');
    const map = await eventually(async () => {
      const answer = await occupancy('ipprefixpools/v6-subnets/occupancy');
      expect(heldOf(answer.buckets)).toBe(1n);
      return answer;
    });
    expect(map).toMatchObject({ within: '2001:db8::/48', bucketSize: '256' });
    expect(map.buckets[0]).toMatchObject({
      first: '2001:db8::/64',
      last: '2001:db8:0:ff::/64',
      within: '2001:db8::/56',
      held: '1',
    });
    expect(map.buckets[255]!.within).toBe('2001:db8:0:ff00::/56');
  });
});

describe('the map of a prefix pool of a range of lengths', () => {
  it('counts its finest prefixes (its longest length) held by claims of any length', async () => {
    const pool = {
      apiVersion: API_VERSION,
      kind: 'IPPrefixPool',
      metadata: { name: 'lengths' },
      spec: { prefixes: ['10.20.0.0/16'], allocationPrefixLengths: { min: 20, max: 24, default: 22 } },
    };
    expect((await api.post('ipprefixpools', pool)).status).toBe(201);
    const poolRef = { kind: 'IPPrefixPool', name: 'lengths' };
    expect(await claimed('wide', poolRef, { prefixLength: 20 })).toBe('10.20.0.0/20');
    expect(await claimed('narrow', poolRef, { prefixLength: 24 })).toBe('10.20.16.0/24');
    const map = await eventually(async () => {
      const answer = await occupancy('ipprefixpools/lengths/occupancy?buckets=16');
      expect(heldOf(answer.buckets)).toBe(17n); // a /20 is 16 /24s
      return answer;
    });
    expect(map).toMatchObject({ within: '10.20.0.0/16', bucketSize: '16' });
    expect(map.buckets[0]).toMatchObject({ within: '10.20.0.0/20', held: '16' });
    expect(map.buckets[1]).toMatchObject({ within: '10.20.16.0/20', held: '1' });
  });
});

describe('bad queries', () => {
  it.each([
    ['ipaddresspools/vpc-main/occupancy?buckets=0', 400, 'BadRequest'],
    ['ipaddresspools/vpc-main/occupancy?buckets=4097', 400, 'BadRequest'],
    ['ipaddresspools/vpc-main/occupancy?buckets=1.5', 400, 'BadRequest'],
    ['ipaddresspools/vpc-main/occupancy?within=10.42.1.0', 400, 'BadRequest'],
    ['ipaddresspools/vpc-main/occupancy?within=2001:db8::/64', 400, 'BadRequest'],
    ['ipaddresspools/vpc-main/occupancy?within=', 400, 'BadRequest'],
    ['indexpools/vni/occupancy?within=10..1', 400, 'BadRequest'],
    ['ipprefixpools/v6-subnets/occupancy?within=2001:db8::/80', 400, 'BadRequest'],
    ['indexpools/nothing/occupancy', 404, 'NotFound'],
    ['indexpools/Bad_Name/occupancy', 404, 'NotFound'],
  ])('%s answers %i %s', async (path, code, reason) => {
    expectFailure(await api.get(path), code, reason);
  });
});
