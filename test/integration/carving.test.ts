/**
 * Pools carved from pools (api.md, "Pools": `prefixesFrom.claimRef`): a regional /16, a VPC /20 claimed
 * from it, a subnet /24 claimed from the VPC's pool, an address claimed from the subnet's
 * IPAddressPool; `status.prefixes`; Available=False/ClaimPending until the claim holds a value, then
 * candidates with no further call; 409 ClaimInUse; a cascade of the carved pool leaves its claim.
 */
import { describe, expect, it } from 'vitest';
import { API_VERSION, claim, eventually, useTestAllot } from '../helpers/allot.ts';
import { expectFailure } from './support.ts';

const { api } = useTestAllot();

const pool = (kind: string, name: string, spec: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind,
  metadata: { name },
  spec,
});
const from = (claimName: string) => ({ claimRef: { name: claimName } });

async function created(resource: string, body: unknown) {
  const answer = await api.post(resource, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

describe('a regional /16, a VPC /20, a subnet /24 and an address, each carved from the one before', () => {
  it('follows each claim’s value down to an address', async () => {
    await created(
      'ipprefixpools',
      pool('IPPrefixPool', 'region', {
        prefixes: ['10.0.0.0/16'],
        allocationPrefixLengths: { min: 18, max: 28, default: 24 },
      }),
    );
    const vpc = await created(
      'claims',
      claim('vpc-a', { kind: 'IPPrefixPool', name: 'region' }, { prefixLength: 20 }),
    );
    expect(vpc.status.value).toBe('10.0.0.0/20');
    const subnets = await created(
      'ipprefixpools',
      pool('IPPrefixPool', 'vpc-a-subnets', { prefixesFrom: from('vpc-a'), allocationPrefixLength: 24 }),
    );
    expect(subnets.spec).toEqual({
      prefixesFrom: from('vpc-a'),
      allocationPrefixLength: 24,
      reclaimPolicy: 'Recycle',
    });
    expect(subnets.status).toMatchObject({ prefixes: ['10.0.0.0/20'], total: '16' });
    const subnet = await created(
      'claims',
      claim('subnet-1', { kind: 'IPPrefixPool', name: 'vpc-a-subnets' }),
    );
    expect(subnet.status.value).toBe('10.0.0.0/24');
    await created(
      'ipaddresspools',
      pool('IPAddressPool', 'subnet-1-hosts', {
        prefixesFrom: from('subnet-1'),
        gateway: '10.0.0.1',
        excludeNetworkAndBroadcast: true,
      }),
    );
    const host = await created('claims', claim('web-1', { kind: 'IPAddressPool', name: 'subnet-1-hosts' }));
    expect(host.status.value).toBe('10.0.0.2');
    const hosts = (await api.get('ipaddresspools/subnet-1-hosts')).body;
    expect(hosts.status).toMatchObject({ prefixes: ['10.0.0.0/24'], total: '253' });
  });

  it('refuses to release a claim a pool is carved from (409 ClaimInUse), and changes nothing', async () => {
    const answer = await api.delete('claims/vpc-a');
    expectFailure(answer, 409, 'ClaimInUse');
    expect(answer.body.message).toContain('vpc-a-subnets');
    expect((await api.get('claims/vpc-a')).body.status.value).toBe('10.0.0.0/20');
  });

  it('deleting a carved pool with cascade leaves its source claim, which may then be released', async () => {
    const deleted = await api.delete('ipaddresspools/subnet-1-hosts?cascade=true');
    expect(deleted.status).toBe(200);
    expect((await api.get('claims/web-1')).status).toBe(404);
    expect((await api.get('claims/subnet-1')).body.status.value).toBe('10.0.0.0/24');
    expect((await api.delete('claims/subnet-1')).status).toBe(200);
  });
});

describe('a pool carved from a claim that holds no value yet', () => {
  it('says ClaimPending with no candidates, then gains them with no further call', async () => {
    await created(
      'ipprefixpools',
      pool('IPPrefixPool', 'lab', { prefixes: ['192.168.0.0/16'], allocationPrefixLength: 22 }),
    );
    const pending = await created(
      'ipprefixpools',
      pool('IPPrefixPool', 'lab-racks', { prefixesFrom: from('lab-block'), allocationPrefixLength: 26 }),
    );
    expect(pending.status).toMatchObject({ total: '0', free: '0', prefixes: [] });
    expect(pending.status.conditions[0]).toMatchObject({
      type: 'Available',
      status: 'False',
      reason: 'ClaimPending',
    });
    const waiting = await created('claims', claim('rack-1', { kind: 'IPPrefixPool', name: 'lab-racks' }));
    expect(waiting.status.conditions[0]).toMatchObject({ status: 'False', reason: 'PoolExhausted' });
    await created('claims', claim('lab-block', { kind: 'IPPrefixPool', name: 'lab' }));
    await eventually(async () => {
      const racks = (await api.get('ipprefixpools/lab-racks')).body;
      expect(racks.status).toMatchObject({ prefixes: ['192.168.0.0/22'], total: '16' });
      expect(racks.status.conditions[0].reason).toBe('HasCapacity');
    });
    await eventually(async () =>
      expect((await api.get('claims/rack-1')).body.status.value).toBe('192.168.0.0/26'),
    );
  });

  it('refuses a spec with both prefixes and prefixesFrom, or a malformed claimRef (422)', async () => {
    const both = await api.post(
      'ipprefixpools',
      pool('IPPrefixPool', 'bad', {
        prefixes: ['10.9.0.0/16'],
        prefixesFrom: from('x'),
        allocationPrefixLength: 24,
      }),
    );
    expectFailure(both, 422, 'Invalid');
    const malformed = await api.post(
      'ipaddresspools',
      pool('IPAddressPool', 'bad', { prefixesFrom: { claimRef: { name: 'Not_A_Name' } } }),
    );
    expectFailure(malformed, 422, 'Invalid');
    expect(malformed.body.details.causes[0].field).toBe('spec.prefixesFrom.claimRef.name');
    const changed = await api.put(
      'ipprefixpools/lab-racks',
      pool('IPPrefixPool', 'lab-racks', { prefixesFrom: from('other'), allocationPrefixLength: 26 }),
    );
    expectFailure(changed, 422, 'Invalid');
  });
});
