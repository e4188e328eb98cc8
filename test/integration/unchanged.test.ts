/**
 * A PUT that changes nothing changes nothing (a claim's is not even written), whatever order the store returns a map's keys in: DynamoDB
 * (and DynamoDB Local) keep no order of a map's attributes, dynalite keeps the order written, so a
 * comparison of JSON text passed on dynalite alone (docs/testing.md, where the two stores disagreed).
 */
import { describe, expect, it } from 'vitest';
import { objectKey } from '../../lib/store/keys.ts';
import type { Resource } from '../../lib/domain/kinds.ts';
import { API_VERSION, claim, indexPool, useTestAllot } from '../helpers/allot.ts';

const { allot, api } = useTestAllot();

/** Keys in an order no store sorts them into (neither alphabetical nor its reverse). */
const labels = { zeta: '1', alpha: '2', mid: '3', beta: '4', omega: '5' };
const annotations = { 'b.example.com/x': '1', 'a.example.com/y': '2', 'c.example.com/z': '3' };

async function storedRv(resource: Resource, name: string): Promise<number> {
  const item = await allot.table.get<{ rv: number }>(objectKey('default', resource, name));
  return item!.rv;
}

describe('a PUT of what is already stored', () => {
  // A pool's PUT always writes (its counts' revision moves on); what must not move is its generation.
  it('keeps the generation of a pool whose spec is the same', async () => {
    const pool = indexPool('same-pool', ['1..10', '20..30']);
    Object.assign(pool.metadata, { labels, annotations });
    expect((await api.put('indexpools/same-pool', pool)).status).toBe(201);
    const again = await api.put('indexpools/same-pool', pool);
    expect(again.status).toBe(200);
    expect(again.body.metadata.generation).toBe(1);
  });

  it('leaves a claim with labels, annotations and an owner as it is', async () => {
    await api.post('indexpools', indexPool('same-claims', ['1..10']));
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-1' };
    const body = claim('same-claim', { kind: 'IndexPool', name: 'same-claims' }, { owner });
    Object.assign(body.metadata, { labels, annotations });
    expect((await api.put('claims/same-claim', body)).status).toBe(201);
    const rv = await storedRv('claims', 'same-claim');
    const again = await api.put('claims/same-claim', body);
    expect(again.status).toBe(200);
    expect(again.body.metadata.generation).toBe(1);
    expect(await storedRv('claims', 'same-claim')).toBe(rv);
  });

  it('leaves an allocation object with labels as it is', async () => {
    await api.post('indexpools', indexPool('same-objects', ['1..10']));
    const index = {
      apiVersion: API_VERSION,
      kind: 'Index',
      metadata: { name: 'same-object', labels, annotations },
      spec: { poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: 'same-objects' }, index: 4 },
    };
    expect((await api.put('indices/same-object', index)).status).toBe(201);
    const before = (await api.get('indices/same-object')).body;
    const again = await api.put('indices/same-object', index);
    expect(again.status).toBe(200);
    expect(again.body.metadata.generation).toBe(before.metadata.generation);
  });
});
