import { describe, expect, it } from 'vitest';
import { claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

const { api } = useTestAllot();

describe('the seed example', () => {
  it('claims 64512 from asn-pool as asn-pool-64512', async () => {
    expect(
      (await api.post('indexpools', indexPool('asn-pool', ['64512..65534', '4200000000..4294967294'])))
        .status,
    ).toBe(201);
    const answer = await api.post('claims', claim('leaf1-asn', { kind: 'IndexPool', name: 'asn-pool' }));
    expect(answer.status).toBe(201);
    expect(answer.body.status.value).toBe('64512');
    expect(answer.body.status.allocationRef.name).toBe('asn-pool-64512');
    expect(answer.body.status.conditions[0]).toMatchObject({
      type: 'Allocated',
      status: 'True',
      reason: 'Allocated',
    });
  });

  it('counts the allocation in the pool status once the stream has run', async () => {
    await eventually(async () => {
      const pool = await api.get('indexpools/asn-pool');
      expect(pool.body.status).toMatchObject({ allocated: 1, total: '94968318', free: '94968317' });
    });
  });
});
