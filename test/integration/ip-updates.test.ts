/** IP pool spec updates (issue 3): allocations stay, out-of-range ones turn invalid, waiting claims fill. */
import { describe, expect, it } from 'vitest';

import { eventually, useTestAllot } from '../helpers/allot.ts';

const { api } = useTestAllot();

const claimOn = (name: string, pool: string) =>
  api.post('claims', { metadata: { name }, spec: { poolRef: { kind: 'IPAddressPool', name: pool } } });

describe.each([
  {
    family: 'IPv4',
    first: '10.9.0.0/31',
    second: '10.8.0.0/31',
    values: ['10.9.0.0', '10.9.0.1', '10.8.0.0'],
  },
  {
    family: 'IPv6',
    first: '2001:db8:9::/127',
    second: '2001:db8:8::/127',
    values: ['2001:db8:9::', '2001:db8:9::1', '2001:db8:8::'],
  },
])('updating an $family address pool', ({ family, first, second, values }) => {
  const pool = `grow-${family.toLowerCase()}`;

  it('allocates a PoolExhausted claim when a prefix is added, and keeps allocations when one is removed', async () => {
    expect((await api.put(`ipaddresspools/${pool}`, { spec: { prefixes: [first] } })).status).toBe(201);
    expect((await claimOn(`${pool}-a`, pool)).body.status.value).toBe(values[0]);
    expect((await claimOn(`${pool}-b`, pool)).body.status.value).toBe(values[1]);
    const waiting = await claimOn(`${pool}-c`, pool);
    expect(waiting.body.status.conditions[0].reason).toBe('PoolExhausted');

    const grown = await api.put(`ipaddresspools/${pool}`, { spec: { prefixes: [first, second] } });
    expect(grown.status).toBe(200);
    expect(grown.body.metadata.generation).toBe(2);
    await eventually(async () =>
      expect((await api.get(`claims/${pool}-c`)).body.status.value).toBe(values[2]),
    );

    // Reordered and the first prefix removed: its allocations stay, now out of range.
    const shrunk = await api.put(`ipaddresspools/${pool}`, { spec: { prefixes: [second] } });
    expect(shrunk.status).toBe(200);
    // Eventually: the waiting claim may have been tried by two actors at once (its own record and the
    // pool's wake), and the one whose settle lost gives its object back a moment later.
    let kept = await api.get(`ipaddresses?pool=${pool}`);
    await eventually(async () => {
      kept = await api.get(`ipaddresses?pool=${pool}`);
      expect(kept.body.items).toHaveLength(3);
    });
    const validity = Object.fromEntries(
      kept.body.items.map((item: any) => [item.spec.address, item.status.conditions[0].reason]),
    );
    expect(validity).toEqual({
      [values[0]!]: 'ValueOutOfRange',
      [values[1]!]: 'ValueOutOfRange',
      [values[2]!]: 'ValueInRange',
    });
    expect((await api.get(`claims/${pool}-a`)).body.status.value).toBe(values[0]);
    await eventually(async () =>
      expect((await api.get(`ipaddresspools/${pool}`)).body.status).toMatchObject({
        allocated: 3,
        total: '2',
        free: '1',
      }),
    );
  });
});
