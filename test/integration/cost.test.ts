/**
 * A claim costs the same number of DynamoDB requests whatever the pool's size: the engine reads one block
 * around its candidate and never enumerates the pool.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createHttpHandler } from '../../functions/http.ts';
import { Table } from '../../lib/store/table.ts';

import { fakeContext } from '../../lib/local/server.ts';
import { API_VERSION, useTestAllot } from '../helpers/allot.ts';
import { countingClient, httpEvent } from '../helpers/events.ts';

const { allot } = useTestAllot({ stream: false });
let counter: ReturnType<typeof countingClient>;
let handler: ReturnType<typeof createHttpHandler>;

beforeAll(() => {
  counter = countingClient(allot.store.endpoint);
  handler = createHttpHandler({
    table: new Table({ tableName: allot.table.tableName, client: counter.client }),
  });
});

async function call(method: string, path: string, body?: unknown) {
  const result = (await handler(
    httpEvent(method, `/v1/namespaces/cost/${path}`, body),
    fakeContext('test'),
  )) as {
    statusCode: number;
    body: string;
  };
  return { status: result.statusCode, body: JSON.parse(result.body) };
}

/** Requests made by the claim handler for one new claim. */
async function requestsForClaim(kind: string, pool: string, claimName: string): Promise<number> {
  counter.reset();
  const answer = await call('POST', 'claims', {
    apiVersion: API_VERSION,
    kind: 'Claim',
    metadata: { name: claimName },
    spec: { poolRef: { kind, name: pool } },
  });
  expect(answer.body.status.conditions[0].reason).toBe('Allocated');
  return counter.total();
}

const POOLS = [
  { kind: 'IndexPool', resource: 'indexpools', name: 'small-index', spec: { ranges: ['1..4'] } },
  {
    kind: 'IndexPool',
    resource: 'indexpools',
    name: 'huge-index',
    spec: { ranges: ['0..9223372036854775806'] },
  },
  { kind: 'IPAddressPool', resource: 'ipaddresspools', name: 'v4-30', spec: { prefixes: ['10.0.0.0/30'] } },
  { kind: 'IPAddressPool', resource: 'ipaddresspools', name: 'v6-64', spec: { prefixes: ['2001:db8::/64'] } },
  {
    kind: 'IPPrefixPool',
    resource: 'ipprefixpools',
    name: 'v4-26s',
    spec: { prefixes: ['10.1.0.0/24'], allocationPrefixLength: 26 },
  },
  {
    kind: 'IPPrefixPool',
    resource: 'ipprefixpools',
    name: 'v6-48-of-64s',
    spec: { prefixes: ['2001:db8:1::/48'], allocationPrefixLength: 64 },
  },
];

describe('the cost of a claim', () => {
  it('is the same number of requests for a /30, a /64, a /48 of /64s, and index pools of 4 and 2^63 values', async () => {
    const costs: Record<string, number[]> = {};
    for (const pool of POOLS) {
      const created = await call('POST', pool.resource, { metadata: { name: pool.name }, spec: pool.spec });
      expect(created.status).toBe(201);
      costs[pool.name] = [];
      for (let i = 0; i < 3; i++)
        costs[pool.name]!.push(await requestsForClaim(pool.kind, pool.name, `${pool.name}-c${i}`));
    }
    const all = Object.values(costs).flat();
    expect(new Set(all).size).toBe(1);
    expect(all[0]).toBeLessThanOrEqual(5);
  });

  it('answers a repeated PUT of the same claim with at most 2 requests', async () => {
    const body = {
      metadata: { name: 'again' },
      spec: { poolRef: { kind: 'IndexPool', name: 'small-index' } },
    };
    expect((await call('PUT', 'claims/again', body)).status).toBe(201);
    counter.reset();
    const repeated = await call('PUT', 'claims/again', body);
    expect(repeated.status).toBe(200);
    expect(counter.total()).toBeLessThanOrEqual(2);
  });
});
