/**
 * A claim handler instance remembers each pool as its last claim read it, to fetch the summary its next
 * search reads first beside the pool (lib/service/allocation/claim-reads.ts). The memory must never decide: after the
 * pool's spec changes, or the pool is deleted, or deleted and made again with other candidates, the next
 * claim through the remembering instance gets a value of the pool as it is now, or waits for a pool that
 * is gone, while the instance still remembers the old pool.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createHttpHandler } from '../../functions/http.ts';
import { fakeContext } from '../../lib/local/server.ts';
import type { PoolRecord } from '../../lib/domain/objects/records.ts';
import { objectKey } from '../../lib/store/keys.ts';
import { Table } from '../../lib/store/table.ts';
import { claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import { countingClient, httpEvent } from '../helpers/events.ts';

const { allot, api } = useTestAllot();
const poolsRead = new Map<string, PoolRecord>();
let counter: ReturnType<typeof countingClient>;
let handler: ReturnType<typeof createHttpHandler>;

beforeAll(() => {
  counter = countingClient(allot.store.endpoint);
  handler = createHttpHandler({
    table: new Table({ tableName: allot.table.tableName, client: counter.client }),
    poolsRead,
  });
});

/** A claim through the remembering instance. */
async function claimThrough(name: string, pool: string) {
  const result = (await handler(
    httpEvent('POST', '/v1/namespaces/default/claims', claim(name, { kind: 'IndexPool', name: pool })),
    fakeContext('claim'),
  )) as APIGatewayProxyStructuredResultV2;
  const body = JSON.parse(result.body ?? 'null');
  expect(result.statusCode, JSON.stringify(body)).toBe(201);
  return body;
}

const remembered = (pool: string) => {
  const key = objectKey('default', 'indexpools', pool);
  return poolsRead.get(`${key.pk}/${key.sk}`);
};

/** Until the stream function has counted the pool as it now is (its summaries describe it). */
async function counted(pool: string, allocated: number) {
  await eventually(async () => {
    const stored = await allot.table.get<PoolRecord>(objectKey('default', 'indexpools', pool));
    expect(stored?.counts?.generation).toBe(stored?.metadata.generation);
    expect(stored?.counts?.allocated).toBe(allocated);
  });
}

describe('a claim handler instance that remembers a pool', () => {
  it('fetches the summary beside the pool once it has read the pool before', async () => {
    expect((await api.post('indexpools', indexPool('moving', ['1..100']))).status).toBe(201);
    await counted('moving', 0);
    expect((await claimThrough('first', 'moving')).status.value).toBe('1');
    await counted('moving', 1);
    counter.reset();
    expect((await claimThrough('second', 'moving')).status.value).toBe('2');
    expect(counter.counts.BatchGetItem).toBe(1);
  });

  it('gives a value of the new spec after the spec changed', async () => {
    await counted('moving', 2);
    const pool = (await api.get('indexpools/moving')).body;
    const moved = await api.put('indexpools/moving', { ...pool, spec: { ranges: ['500..600'] } });
    expect(moved.status).toBe(200);
    expect(remembered('moving')?.spec.ranges).toEqual(['1..100']);
    expect((await claimThrough('after-update', 'moving')).status.value).toBe('500');
    await counted('moving', 3);
    expect((await claimThrough('after-count', 'moving')).status.value).toBe('501');
  });

  it('gives a value of the pool made again, not of the one deleted', async () => {
    await counted('moving', 4);
    expect(remembered('moving')?.spec.ranges).toEqual(['500..600']);
    const before = remembered('moving')!.metadata.uid;
    expect((await api.delete('indexpools/moving?cascade=true')).status).toBe(200);
    expect((await api.post('indexpools', indexPool('moving', ['7000..7010']))).status).toBe(201);
    expect(remembered('moving')?.metadata.uid).toBe(before);
    expect((await claimThrough('made-again', 'moving')).status.value).toBe('7000');
  });

  it('waits for a pool that is gone, and forgets it', async () => {
    await counted('moving', 1);
    expect(remembered('moving')?.spec.ranges).toEqual(['7000..7010']);
    expect((await api.delete('indexpools/moving?cascade=true')).status).toBe(200);
    const waiting = await claimThrough('no-pool', 'moving');
    expect(waiting.status.conditions[0]).toMatchObject({ status: 'False', reason: 'PoolNotFound' });
    expect(waiting.status.value).toBeUndefined();
    expect(remembered('moving')).toBeUndefined();
  });
});
