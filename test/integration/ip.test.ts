/**
 * IPAddressPool and IPPrefixPool over HTTP, IPv4 and IPv6 (api.md, "Pools", "Allocation objects",
 * "Claim"): candidates and their order, totals, canonical values, deterministic names, `within`,
 * `reserved`, and the 422 causes of IP specs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, claim, client, eventually, useTestAllot } from '../helpers/allot.ts';

import { allocatedState, availableState, expectFailure, expectInvalid, validState } from './support.ts';

const { allot, api } = useTestAllot();

function addressPool(name: string, prefixes: unknown, extra: Record<string, unknown> = {}) {
  return { apiVersion: API_VERSION, kind: 'IPAddressPool', metadata: { name }, spec: { prefixes, ...extra } };
}

function prefixPool(
  name: string,
  prefixes: unknown,
  allocationPrefixLength: unknown,
  extra: Record<string, unknown> = {},
) {
  return {
    apiVersion: API_VERSION,
    kind: 'IPPrefixPool',
    metadata: { name },
    spec: { prefixes, allocationPrefixLength, ...extra },
  };
}

const addressRef = (name: string) => ({ kind: 'IPAddressPool', name });
const prefixRef = (name: string) => ({ kind: 'IPPrefixPool', name });

async function claimed(name: string, poolRef: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const answer = await api.post('claims', claim(name, poolRef, extra));
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

describe('the PiVirt public pool (IPv4 addresses)', () => {
  beforeAll(async () => {
    const created = await api.post(
      'ipaddresspools',
      addressPool('public-zone-a', ['203.0.113.0/24'], {
        gateway: '203.0.113.1',
        exclude: ['203.0.113.2', '203.0.113.3'],
        excludeNetworkAndBroadcast: true,
      }),
    );
    expect(created.status).toBe(201);
  });

  it('totals 251 candidates', async () => {
    const pool = (await api.get('ipaddresspools/public-zone-a')).body;
    expect(pool.status).toMatchObject({ allocated: 0, total: '251', free: '251' });
    expect(pool.spec).toEqual({
      prefixes: ['203.0.113.0/24'],
      gateway: '203.0.113.1',
      exclude: ['203.0.113.2', '203.0.113.3'],
      excludeNetworkAndBroadcast: true,
      reclaimPolicy: 'Recycle',
    });
  });

  it('hands out 203.0.113.4, then 203.0.113.5', async () => {
    const first = await claimed('fip-1', addressRef('public-zone-a'));
    expect(first.status.value).toBe('203.0.113.4');
    expect(first.status.allocationRef).toEqual({
      apiVersion: API_VERSION,
      kind: 'IPAddress',
      name: 'public-zone-a-203-0-113-4',
    });
    expect((await claimed('fip-2', addressRef('public-zone-a'))).status.value).toBe('203.0.113.5');
  });

  it('writes the allocation object with spec.address', async () => {
    const allocation = await api.get('ipaddresses/public-zone-a-203-0-113-4');
    expect(allocation.status).toBe(200);
    expect(allocation.body).toMatchObject({
      kind: 'IPAddress',
      spec: {
        poolRef: { kind: 'IPAddressPool', name: 'public-zone-a' },
        address: '203.0.113.4',
        claimRef: { name: 'fip-1' },
      },
    });
    expect(validState(allocation.body)).toBe('True/ValueInRange');
  });

  it('never hands out the gateway, an excluded address, the network or the broadcast address', async () => {
    for (const value of ['203.0.113.0', '203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.255']) {
      const answer = await claimed(`fip-bad-${value.split('.')[3]}`, addressRef('public-zone-a'), { value });
      expect(allocatedState(answer), value).toBe('False/PoolExhausted');
    }
    expect(
      (await claimed('fip-last', addressRef('public-zone-a'), { value: '203.0.113.254' })).status.value,
    ).toBe('203.0.113.254');
  });

  it('counts the allocations once the stream has run', async () => {
    await eventually(async () => {
      expect((await api.get('ipaddresspools/public-zone-a')).body.status).toMatchObject({
        allocated: 3,
        free: '248',
      });
    });
  });
});

describe('IPv4 address pools', () => {
  it('names an allocation <pool>-<a>-<b>-<c>-<d> (vpc-main-10-42-1-7)', async () => {
    const acme = client(allot.url, 'acme');
    await acme.post('ipaddresspools', addressPool('vpc-main', ['10.42.0.0/16']));
    const answer = await acme.post(
      'claims',
      claim('web-01-0', addressRef('vpc-main'), { value: '10.42.1.7' }),
    );
    expect(answer.body.status).toMatchObject({
      value: '10.42.1.7',
      allocationRef: { name: 'vpc-main-10-42-1-7' },
    });
    expect((await acme.get('ipaddresses/vpc-main-10-42-1-7')).body.spec.address).toBe('10.42.1.7');
  });

  it('includes network and broadcast addresses unless told otherwise (as ironcore does)', async () => {
    await api.post('ipaddresspools', addressPool('plain', ['10.0.0.0/30']));
    expect((await api.get('ipaddresspools/plain')).body.status.total).toBe('4');
    const values = [];
    for (let i = 0; i < 4; i++) values.push((await claimed(`plain-${i}`, addressRef('plain'))).status.value);
    expect(values).toEqual(['10.0.0.0', '10.0.0.1', '10.0.0.2', '10.0.0.3']);
    expect(allocatedState(await claimed('plain-4', addressRef('plain')))).toBe('False/PoolExhausted');
    await eventually(async () =>
      expect(availableState((await api.get('ipaddresspools/plain')).body)).toBe('False/Exhausted'),
    );
  });

  it.each([
    ['/32', '10.1.0.1/32', false, '1'],
    ['/31', '10.1.0.2/31', true, '2'],
    ['/30 without network and broadcast', '10.1.0.4/30', true, '2'],
    ['/24 without network and broadcast', '10.2.0.0/24', true, '254'],
  ])('totals a %s', async (what, prefix, excludeNetworkAndBroadcast, total) => {
    const name = `total-${what.replace(/[^0-9a-z]+/g, '-').replace(/^-|-$/g, '')}`;
    const answer = await api.post(
      'ipaddresspools',
      addressPool(name, [prefix], { excludeNetworkAndBroadcast }),
    );
    expect(answer.status).toBe(201);
    expect(answer.body.status.total).toBe(total);
  });

  it('hands out prefixes in spec order and excludes CIDRs', async () => {
    await api.post(
      'ipaddresspools',
      addressPool('ordered', ['192.168.1.0/24', '10.0.0.0/24'], {
        exclude: ['192.168.1.0/30', '10.0.0.0/31'],
      }),
    );
    expect((await api.get('ipaddresspools/ordered')).body.status.total).toBe(String(256 - 4 + 256 - 2));
    expect((await claimed('ordered-a', addressRef('ordered'))).status.value).toBe('192.168.1.4');
    expect((await claimed('ordered-b', addressRef('ordered'), { value: '10.0.0.2' })).status.value).toBe(
      '10.0.0.2',
    );
  });

  it('masks a prefix with host bits set', async () => {
    const answer = await api.post('ipaddresspools', addressPool('masked', ['10.9.9.9/24']));
    expect(answer.status).toBe(201);
    expect(answer.body.spec.prefixes).toEqual(['10.9.9.0/24']);
  });

  it('applies reserved: a subnet claim skips its gateway', async () => {
    await api.post(
      'ipaddresspools',
      addressPool('subnets', ['10.50.0.0/16'], { excludeNetworkAndBroadcast: true }),
    );
    const host = await claimed('host-a', addressRef('subnets'), {
      within: '10.50.7.0/24',
      reserved: ['10.50.7.1'],
    });
    expect(host.status.value).toBe('10.50.7.2');
    const next = await claimed('host-b', addressRef('subnets'), {
      within: '10.50.7.0/24',
      reserved: ['10.50.7.1'],
    });
    expect(next.status.value).toBe('10.50.7.3');
  });

  it('excludes the first and last address of within when the pool excludes network and broadcast', async () => {
    const first = await claimed('edge-a', addressRef('subnets'), { within: '10.50.8.0/30' });
    expect(first.status.value).toBe('10.50.8.1');
    expect((await claimed('edge-b', addressRef('subnets'), { within: '10.50.8.0/30' })).status.value).toBe(
      '10.50.8.2',
    );
    expect(allocatedState(await claimed('edge-c', addressRef('subnets'), { within: '10.50.8.0/30' }))).toBe(
      'False/PoolExhausted',
    );
  });

  it('answers PoolExhausted for a reserved value asked for', async () => {
    const answer = await claimed('reserved-asked', addressRef('subnets'), {
      value: '10.50.9.9',
      reserved: ['10.50.9.9'],
    });
    expect(allocatedState(answer)).toBe('False/PoolExhausted');
  });

  it('answers 422 for an address with a leading zero (010.0.0.1)', async () => {
    await api.post('ipaddresspools', addressPool('octal', ['10.0.0.0/8']));
    expectInvalid(
      await api.post('claims', claim('octal-a', addressRef('octal'), { value: '010.0.0.1' })),
      'spec.value',
    );
    expectInvalid(
      await api.post('ipaddresspools', addressPool('octal-pool', ['010.0.0.0/8'])),
      'spec.prefixes[0]',
    );
    expectInvalid(
      await api.post('ipaddresses', {
        metadata: { name: 'octal-object' },
        spec: { poolRef: addressRef('octal'), address: '010.0.0.1' },
      }),
      'spec.address',
    );
    expectFailure(await api.get('claims/octal-a'), 404, 'NotFound');
  });

  it.each([
    ['an address with five octets', '10.0.0.0.1'],
    ['an octet over 255', '10.0.0.256'],
    ['hex', '0x0a.0.0.1'],
    ['a CIDR', '10.0.0.1/32'],
  ])('answers 422 for %s as a claim value', async (_what, value) => {
    expectInvalid(
      await api.post('claims', claim('bad-address', addressRef('octal'), { value })),
      'spec.value',
    );
  });
});

describe('IPv6 address pools', () => {
  it('totals a /64 as "18446744073709551616"', async () => {
    const answer = await api.post('ipaddresspools', addressPool('v6-64', ['2001:db8::/64']));
    expect(answer.status).toBe(201);
    expect(answer.body.status).toMatchObject({ total: '18446744073709551616', free: '18446744073709551616' });
  });

  it('hands out the first address first and names it with the 8 groups written in full', async () => {
    const first = await claimed('v6-a', addressRef('v6-64'));
    expect(first.status.value).toBe('2001:db8::');
    expect(first.status.allocationRef.name).toBe('v6-64-2001-0db8-0000-0000-0000-0000-0000-0000');
    const second = await claimed('v6-b', addressRef('v6-64'));
    expect(second.status.value).toBe('2001:db8::1');
    expect(second.status.allocationRef.name).toBe('v6-64-2001-0db8-0000-0000-0000-0000-0000-0001');
    expect(
      (await api.get('ipaddresses/v6-64-2001-0db8-0000-0000-0000-0000-0000-0001')).body.spec.address,
    ).toBe('2001:db8::1');
  });

  it('counts a /64 pool down from 2^64 once the stream has run', async () => {
    await eventually(async () => {
      expect((await api.get('ipaddresspools/v6-64')).body.status).toMatchObject({
        allocated: 2,
        free: '18446744073709551614',
      });
    });
  });

  it('stores 2001:DB8:0::1 as 2001:db8::1', async () => {
    await api.post('ipaddresspools', addressPool('v6-canon', ['2001:DB8:0:0::/120']));
    expect((await api.get('ipaddresspools/v6-canon')).body.spec.prefixes).toEqual(['2001:db8::/120']);
    const answer = await claimed('v6-canon-a', addressRef('v6-canon'), { value: '2001:DB8:0::1' });
    expect(answer.spec.value).toBe('2001:db8::1');
    expect(answer.status.value).toBe('2001:db8::1');
    const allocation = await api.get(`ipaddresses/${answer.status.allocationRef.name}`);
    expect(allocation.body.spec.address).toBe('2001:db8::1');
  });

  it('finds an object written in another IPv6 spelling as the same value', async () => {
    const answer = await api.post('ipaddresses', {
      metadata: { name: 'v6-canon-0000-custom' },
      spec: { poolRef: addressRef('v6-canon'), address: '2001:0db8:0000:0000:0000:0000:0000:0001' },
    });
    expectFailure(answer, 409, 'AlreadyExists');
  });

  it('excludes only the first address of an IPv6 prefix with excludeNetworkAndBroadcast', async () => {
    const answer = await api.post(
      'ipaddresspools',
      addressPool('v6-edges', ['2001:db8:1::/126'], { excludeNetworkAndBroadcast: true }),
    );
    expect(answer.body.status.total).toBe('3');
    expect((await claimed('v6-edges-a', addressRef('v6-edges'))).status.value).toBe('2001:db8:1::1');
  });

  it.each([
    ['/128', '2001:db8:2::1/128', '1'],
    ['/127', '2001:db8:2::2/127', '2'],
  ])('keeps every address of a %s even with excludeNetworkAndBroadcast', async (what, prefix, total) => {
    const answer = await api.post(
      'ipaddresspools',
      addressPool(`v6-p2p-${what.slice(1)}`, [prefix], { excludeNetworkAndBroadcast: true }),
    );
    expect(answer.status).toBe(201);
    expect(answer.body.status.total).toBe(total);
  });

  it('answers 422 for an IPv4 value in an IPv6 pool', async () => {
    expectInvalid(
      await api.post('claims', claim('v6-wrong-family', addressRef('v6-64'), { value: '10.0.0.1' })),
      'spec.value',
    );
  });
});

describe('IP prefix pools', () => {
  it('hands out the aligned /64s of a /48 in order and totals "65536"', async () => {
    const created = await api.post('ipprefixpools', prefixPool('v6-48', ['2001:db8::/48'], 64));
    expect(created.status).toBe(201);
    expect(created.body.status).toMatchObject({ total: '65536', free: '65536' });
    const first = await claimed('subnet-a', prefixRef('v6-48'));
    expect(first.status.value).toBe('2001:db8::/64');
    expect(first.status.allocationRef).toEqual({
      apiVersion: API_VERSION,
      kind: 'IPPrefix',
      name: 'v6-48-2001-0db8-0000-0000-0000-0000-0000-0000-64',
    });
    const second = await claimed('subnet-b', prefixRef('v6-48'));
    expect(second.status.value).toBe('2001:db8:0:1::/64');
    const allocation = await api.get(`ipprefixes/${second.status.allocationRef.name}`);
    expect(allocation.body.spec).toMatchObject({
      prefix: '2001:db8:0:1::/64',
      poolRef: { kind: 'IPPrefixPool', name: 'v6-48' },
    });
  });

  it('names an IPv4 prefix <pool>-<a>-<b>-<c>-<d>-<length> (p-10-0-0-64-26)', async () => {
    await api.post('ipprefixpools', prefixPool('p', ['10.0.0.0/24'], 26));
    expect((await api.get('ipprefixpools/p')).body.status.total).toBe('4');
    expect((await claimed('p-a', prefixRef('p'))).status.allocationRef.name).toBe('p-10-0-0-0-26');
    const second = await claimed('p-b', prefixRef('p'));
    expect(second.status).toMatchObject({ value: '10.0.0.64/26', allocationRef: { name: 'p-10-0-0-64-26' } });
  });

  it('gives a subnet claim with within a prefix inside it', async () => {
    await api.post('ipprefixpools', prefixPool('vpc-subnets', ['10.42.0.0/16'], 24));
    expect(
      (await claimed('sub-a', prefixRef('vpc-subnets'), { within: '10.42.128.0/17' })).status.value,
    ).toBe('10.42.128.0/24');
    expect(
      (await claimed('sub-b', prefixRef('vpc-subnets'), { within: '10.42.128.0/17' })).status.value,
    ).toBe('10.42.129.0/24');
    expect((await claimed('sub-c', prefixRef('vpc-subnets'))).status.value).toBe('10.42.0.0/24');
  });

  it('gives a specific prefix, masked, and refuses one of another length', async () => {
    expect((await claimed('sub-d', prefixRef('vpc-subnets'), { value: '10.42.7.9/24' })).status.value).toBe(
      '10.42.7.0/24',
    );
    expectInvalid(
      await api.post('claims', claim('sub-e', prefixRef('vpc-subnets'), { value: '10.42.8.0/25' })),
      'spec.value',
    );
  });

  it('answers PoolExhausted when every prefix is handed out', async () => {
    await api.post('ipprefixpools', prefixPool('two-halves', ['192.168.0.0/24'], 25));
    await claimed('half-a', prefixRef('two-halves'));
    await claimed('half-b', prefixRef('two-halves'));
    expect(allocatedState(await claimed('half-c', prefixRef('two-halves')))).toBe('False/PoolExhausted');
  });

  it('answers 422 for within longer than allocationPrefixLength', async () => {
    expectInvalid(
      await api.post('claims', claim('sub-long', prefixRef('vpc-subnets'), { within: '10.42.1.0/25' })),
      'spec.within',
    );
  });

  it('answers 422 for reserved on a prefix claim', async () => {
    expectInvalid(
      await api.post('claims', claim('sub-reserved', prefixRef('vpc-subnets'), { reserved: ['10.42.0.1'] })),
      'spec.reserved',
    );
  });

  it('answers 422 when allocationPrefixLength changes (allocations are keyed by it)', async () => {
    expectInvalid(
      await api.put('ipprefixpools/vpc-subnets', prefixPool('vpc-subnets', ['10.42.0.0/16'], 26)),
      'spec.allocationPrefixLength',
    );
  });

  it('accepts a prefix pool spec update that adds a prefix', async () => {
    const replaced = await api.put(
      'ipprefixpools/two-halves',
      prefixPool('two-halves', ['192.168.0.0/24', '192.168.1.0/24'], 25),
    );
    expect(replaced.status).toBe(200);
    expect(replaced.body.status.total).toBe('4');
    // The waiting claim takes a /25 of the new prefix, and the other stays free. Which one is not the
    // contract's: on DynamoDB Local, whose stream is slower, a clean-clone run once saw it take the upper
    // one (after a lost race, pickers spread over the free values: docs/races.md).
    await eventually(async () =>
      expect(['192.168.1.0/25', '192.168.1.128/25']).toContain(
        (await api.get('claims/half-c')).body.status.value,
      ),
    );
    await eventually(async () =>
      expect((await api.get('ipprefixpools/two-halves')).body.status.free).toBe('1'),
    );
  });
});

describe('IP allocation objects', () => {
  beforeAll(async () => {
    await api.post('ipaddresspools', addressPool('objects', ['10.77.0.0/24']));
  });

  it('are created by a user under the deterministic name, with Valid True/ValueInRange', async () => {
    const created = await api.post('ipaddresses', {
      apiVersion: API_VERSION,
      kind: 'IPAddress',
      metadata: { name: 'objects-10-77-0-9' },
      spec: { poolRef: addressRef('objects'), address: '10.77.0.9', claimRef: { name: 'router-a' } },
    });
    expect(created.status).toBe(201);
    expect(validState(created.body)).toBe('True/ValueInRange');
    const bound = await claimed('router-a', addressRef('objects'));
    expect(bound.status.value).toBe('10.77.0.0');
  });

  it('answers 422 for an address of another family than the pool', async () => {
    expectInvalid(
      await api.post('ipaddresses', {
        metadata: { name: 'objects-v6' },
        spec: { poolRef: addressRef('objects'), address: '2001:db8::1' },
      }),
      'spec.address',
    );
  });

  it('is Valid False/ValueOutOfRange outside the pool', async () => {
    const created = await api.post('ipaddresses', {
      metadata: { name: 'objects-10-78-0-1' },
      spec: { poolRef: addressRef('objects'), address: '10.78.0.1' },
    });
    expect(created.status).toBe(201);
    expect(validState(created.body)).toBe('False/ValueOutOfRange');
  });

  it('stores an IPPrefix canonically', async () => {
    const created = await api.post('ipprefixes', {
      metadata: { name: 'pre-subnet' },
      spec: { poolRef: prefixRef('vpc-subnets'), prefix: '10.42.200.0/24' },
    });
    expect(created.status).toBe(201);
    expect(created.body.spec.prefix).toBe('10.42.200.0/24');
    expect(validState(created.body)).toBe('True/ValueInRange');
    expectFailure(
      await api.post('ipprefixes', {
        metadata: { name: 'pre-subnet-2' },
        spec: { poolRef: prefixRef('vpc-subnets'), prefix: '10.42.200.1/24' },
      }),
      409,
      'AlreadyExists',
    );
  });

  it('answers 422 for an IPPrefix of another length than the pool hands out', async () => {
    expectInvalid(
      await api.post('ipprefixes', {
        metadata: { name: 'pre-wrong' },
        spec: { poolRef: prefixRef('vpc-subnets'), prefix: '10.42.201.0/25' },
      }),
      'spec.prefix',
    );
  });

  it('lists with ?pool=', async () => {
    const items = (await api.get('ipaddresses?pool=objects')).body.items;
    expect(items.map((item: { spec: { address: string } }) => item.spec.address).sort()).toEqual([
      '10.77.0.0',
      '10.77.0.9',
      '10.78.0.1',
    ]);
  });
});

describe.each([
  {
    family: 'IPv4',
    prefix: '10.90.0.0/30',
    added: '10.91.0.0/31',
    values: ['10.90.0.0', '10.90.0.1', '10.90.0.2', '10.90.0.3'],
  },
  {
    family: 'IPv6',
    prefix: '2001:db8:90::/126',
    added: '2001:db8:91::/127',
    values: ['2001:db8:90::', '2001:db8:90::1', '2001:db8:90::2', '2001:db8:90::3'],
  },
])('the life of an $family address pool', ({ family, prefix, added, values }) => {
  const pool = `life-${family.toLowerCase()}`;
  const ns = () => client(allot.url, pool);

  it('is created by PUT (201) and replaced by PUT (200) with a prefix added', async () => {
    expect((await ns().put(`ipaddresspools/${pool}`, addressPool(pool, [prefix]))).status).toBe(201);
    const replaced = await ns().put(`ipaddresspools/${pool}`, addressPool(pool, [prefix, added]));
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata.generation).toBe(2);
    expect(replaced.body.status.total).toBe('6');
    await ns().put(`ipaddresspools/${pool}`, addressPool(pool, [prefix]));
    expect((await ns().get('ipaddresspools')).body.items.map((item: any) => item.metadata.name)).toEqual([
      pool,
    ]);
  });

  it('is exhausted, and gives exactly a released address to the next claim', async () => {
    const got = [];
    for (let i = 0; i < 4; i++)
      got.push((await ns().post('claims', claim(`c${i}`, addressRef(pool)))).body.status.value);
    expect(got).toEqual(values);
    expect(allocatedState((await ns().post('claims', claim('c4', addressRef(pool)))).body)).toBe(
      'False/PoolExhausted',
    );
    await ns().delete('claims/c4');
    await eventually(async () =>
      expect((await ns().get(`ipaddresspools/${pool}`)).body.status.allocated).toBe(4),
    );
    await ns().delete('claims/c2');
    await eventually(async () =>
      expect((await ns().get(`ipaddresspools/${pool}`)).body.status).toMatchObject({
        allocated: 3,
        free: '1',
      }),
    );
    expect((await ns().post('claims', claim('c5', addressRef(pool)))).body.status.value).toBe(values[2]);
  });

  it('answers 409 PoolInUse to DELETE, and cascades with ?cascade=true', async () => {
    expectFailure(await ns().delete(`ipaddresspools/${pool}`), 409, 'PoolInUse');
    expect((await ns().delete(`ipaddresspools/${pool}?cascade=true`)).status).toBe(200);
    expect((await ns().get('ipaddresses')).body.items).toEqual([]);
    // The claims that were bound are gone (a claim left waiting is not bound to anything).
    for (const name of ['c0', 'c1', 'c3']) expectFailure(await ns().get(`claims/${name}`), 404, 'NotFound');
    expectFailure(await ns().get(`ipaddresspools/${pool}`), 404, 'NotFound');
  });

  it('keeps a released address under Retain and rebinds it to the recreated claim with allow-binding', async () => {
    await ns().post('ipaddresspools', addressPool(`${pool}-retain`, [prefix], { reclaimPolicy: 'Retain' }));
    const held = (await ns().post('claims', claim('router', addressRef(`${pool}-retain`)))).body;
    expect(held.status.value).toBe(values[0]);
    const name = held.status.allocationRef.name;
    await ns().delete('claims/router');
    await eventually(async () =>
      expect((await ns().get(`ipaddresses/${name}`)).body.spec.claimRef).toEqual({ name: 'router', uid: '' }),
    );
    expect((await ns().post('claims', claim('other', addressRef(`${pool}-retain`)))).body.status.value).toBe(
      values[1],
    );
    const annotated = await ns().put(`ipaddresses/${name}`, {
      metadata: { name, annotations: { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' } },
      spec: {
        poolRef: addressRef(`${pool}-retain`),
        address: values[0],
        claimRef: { name: 'router', uid: '' },
      },
    });
    expect(annotated.status).toBe(200);
    const again = (await ns().post('claims', claim('router', addressRef(`${pool}-retain`)))).body;
    expect(again.status.value).toBe(values[0]);
  });
});

describe('the life of a prefix pool', () => {
  it('answers 409 PoolInUse to DELETE and cascades with ?cascade=true', async () => {
    const ns = client(allot.url, 'life-prefix');
    expect((await ns.put('ipprefixpools/life', prefixPool('life', ['2001:db8:a0::/56'], 64))).status).toBe(
      201,
    );
    const held = (await ns.post('claims', claim('net-a', prefixRef('life')))).body;
    expect(held.status.value).toBe('2001:db8:a0::/64');
    expectFailure(await ns.delete('ipprefixpools/life'), 409, 'PoolInUse');
    const deleted = await ns.delete('ipprefixpools/life?cascade=true');
    expect(deleted.status).toBe(200);
    expect(deleted.body.spec).toMatchObject({ prefixes: ['2001:db8:a0::/56'], allocationPrefixLength: 64 });
    expectFailure(await ns.get(`ipprefixes/${held.status.allocationRef.name}`), 404, 'NotFound');
    expectFailure(await ns.get('claims/net-a'), 404, 'NotFound');
  });
});

describe('validation of IP pools', () => {
  it('answers 422 for prefixes of mixed families', async () => {
    const answer = await api.post('ipaddresspools', addressPool('mixed', ['10.0.0.0/8', '2001:db8::/32']));
    expectInvalid(answer, 'spec.prefixes[1]');
    expectInvalid(
      await api.post('ipprefixpools', prefixPool('mixed', ['2001:db8::/32', '10.0.0.0/8'], 64)),
      'spec.prefixes[1]',
    );
  });

  it('answers 422 for overlapping prefixes, nested or identical', async () => {
    const nested = await api.post('ipaddresspools', addressPool('overlap', ['10.0.0.0/16', '10.0.1.0/24']));
    expectInvalid(nested, 'spec.prefixes[1]');
    expect(nested.body.message).toContain('overlaps');
    expectInvalid(
      await api.post('ipaddresspools', addressPool('overlap', ['10.0.0.0/24', '10.0.0.0/24'])),
      'spec.prefixes[1]',
    );
    expectInvalid(
      await api.post('ipprefixpools', prefixPool('overlap', ['2001:db8::/32', '2001:db8:1::/48'], 64)),
      'spec.prefixes[1]',
    );
  });

  it('accepts adjacent prefixes', async () => {
    expect(
      (await api.post('ipaddresspools', addressPool('adjacent', ['10.0.0.0/25', '10.0.0.128/25']))).status,
    ).toBe(201);
  });

  it('answers 422 for allocationPrefixLength not longer than a prefix', async () => {
    expectInvalid(
      await api.post('ipprefixpools', prefixPool('short', ['10.0.0.0/24'], 24)),
      'spec.allocationPrefixLength',
    );
    expectInvalid(
      await api.post('ipprefixpools', prefixPool('short', ['10.0.0.0/24', '10.1.0.0/16'], 20)),
      'spec.allocationPrefixLength',
    );
  });

  it('answers 422 for allocationPrefixLength beyond the family width or missing', async () => {
    expectInvalid(
      await api.post('ipprefixpools', prefixPool('wide', ['10.0.0.0/24'], 33)),
      'spec.allocationPrefixLength',
    );
    expectInvalid(
      await api.post('ipprefixpools', prefixPool('wide', ['2001:db8::/48'], 129)),
      'spec.allocationPrefixLength',
    );
    expectInvalid(
      await api.post('ipprefixpools', prefixPool('wide', ['2001:db8::/48'], '64')),
      'spec.allocationPrefixLength',
    );
    expectInvalid(
      await api.post('ipprefixpools', { metadata: { name: 'wide' }, spec: { prefixes: ['10.0.0.0/24'] } }),
      'spec.allocationPrefixLength',
    );
  });

  it('accepts allocationPrefixLength 32 for IPv4 and 128 for IPv6', async () => {
    expect(
      (await api.post('ipprefixpools', prefixPool('hosts4', ['10.0.0.0/30'], 32))).body.status.total,
    ).toBe('4');
    expect(
      (await api.post('ipprefixpools', prefixPool('hosts6', ['2001:db8::/126'], 128))).body.status.total,
    ).toBe('4');
  });

  it('answers 422 for an exclude or a gateway outside the pool', async () => {
    expectInvalid(
      await api.post('ipaddresspools', addressPool('outside', ['10.0.0.0/24'], { exclude: ['10.0.1.1'] })),
      'spec.exclude[0]',
    );
    expectInvalid(
      await api.post('ipaddresspools', addressPool('outside', ['10.0.0.0/24'], { exclude: ['10.0.0.0/23'] })),
      'spec.exclude[0]',
    );
    expectInvalid(
      await api.post('ipaddresspools', addressPool('outside', ['10.0.0.0/24'], { gateway: '10.0.1.1' })),
      'spec.gateway',
    );
    expectInvalid(
      await api.post('ipaddresspools', addressPool('outside', ['10.0.0.0/24'], { gateway: '2001:db8::1' })),
      'spec.gateway',
    );
  });

  it('names every failing field in one answer', async () => {
    const answer = await api.post(
      'ipaddresspools',
      addressPool('many', ['10.0.0.0/24', 'nonsense'], {
        gateway: 'x',
        excludeNetworkAndBroadcast: 'yes',
        extra: 1,
      }),
    );
    expectInvalid(
      answer,
      'spec.prefixes[1]',
      'spec.gateway',
      'spec.excludeNetworkAndBroadcast',
      'spec.extra',
    );
  });

  it.each([
    ['no prefixes', []],
    ['a prefix without a length', ['10.0.0.0']],
    ['a prefix length over 32', ['10.0.0.0/33']],
    ['a prefix length over 128', ['2001:db8::/129']],
    ['a prefix with a leading-zero length', ['10.0.0.0/08']],
    ['a zone id', ['fe80::%eth0/64']],
  ])('answers 422 for %s', async (_what, prefixes) => {
    const answer = await api.post('ipaddresspools', addressPool('bad-prefixes', prefixes));
    expectFailure(answer, 422, 'Invalid');
    expect(answer.body.details.causes[0].field).toMatch(/^spec\.prefixes/);
  });

  it('answers 422 for allocation fields on the wrong pool kind', async () => {
    expectInvalid(
      await api.post(
        'ipaddresspools',
        addressPool('wrong-fields', ['10.0.0.0/24'], { allocationPrefixLength: 28 }),
      ),
      'spec.allocationPrefixLength',
    );
    expectInvalid(
      await api.post(
        'ipprefixpools',
        prefixPool('wrong-fields', ['10.0.0.0/24'], 28, { gateway: '10.0.0.1' }),
      ),
      'spec.gateway',
    );
  });
});

describe('validation of IP claims', () => {
  beforeAll(async () => {
    await api.post('ipaddresspools', addressPool('claims-v4', ['10.60.0.0/16']));
    await api.post('ipprefixpools', prefixPool('claims-v6', ['2001:db8:60::/48'], 64));
  });

  it('answers 422 for within outside the pool', async () => {
    expectInvalid(
      await api.post('claims', claim('w-out', addressRef('claims-v4'), { within: '10.61.0.0/24' })),
      'spec.within',
    );
    expectInvalid(
      await api.post('claims', claim('w-out6', prefixRef('claims-v6'), { within: '2001:db8:61::/56' })),
      'spec.within',
    );
  });

  it('answers 422 for within wider than the pool', async () => {
    expectInvalid(
      await api.post('claims', claim('w-wide', addressRef('claims-v4'), { within: '10.0.0.0/8' })),
      'spec.within',
    );
  });

  it('answers 422 for within of another family or not a CIDR', async () => {
    expectInvalid(
      await api.post('claims', claim('w-family', addressRef('claims-v4'), { within: '2001:db8::/64' })),
      'spec.within',
    );
    expectInvalid(
      await api.post('claims', claim('w-range', addressRef('claims-v4'), { within: '10.60.0.1..10.60.0.9' })),
      'spec.within',
    );
  });

  it('answers 422 for reserved addresses of another family or malformed', async () => {
    expectInvalid(
      await api.post('claims', claim('r-family', addressRef('claims-v4'), { reserved: ['2001:db8::1'] })),
      'spec.reserved[0]',
    );
    expectInvalid(
      await api.post('claims', claim('r-bad', addressRef('claims-v4'), { reserved: ['10.60.0.1', 'x'] })),
      'spec.reserved[1]',
    );
    expectInvalid(
      await api.post('claims', claim('r-list', addressRef('claims-v4'), { reserved: '10.60.0.1' })),
      'spec.reserved',
    );
  });

  it('writes nothing for a rejected claim', async () => {
    expectFailure(await api.get('claims/w-out'), 404, 'NotFound');
    expectFailure(await api.get('claims/r-bad'), 404, 'NotFound');
  });
});
