/**
 * `GET …/{pool}/{name}/preview` (api.md, "Routes") for every pool kind: the next values claims made now
 * would get, in order, with `count`, `prefixLength`, `within` and `reserved`; it writes nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import { expectFailure } from './support.ts';

const { api, allot } = useTestAllot();

const pool = (kind: string, name: string, spec: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind,
  metadata: { name },
  spec,
});

async function preview(path: string): Promise<string[]> {
  const answer = await api.get(path);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.kind).toBe('Preview');
  return answer.body.values;
}

describe('preview', () => {
  beforeAll(async () => {
    expect((await api.post('indexpools', indexPool('asn', ['64512..64520']))).status).toBe(201);
    expect(
      (
        await api.post(
          'ipaddresspools',
          pool('IPAddressPool', 'subnet', { prefixes: ['10.1.0.0/29'], excludeNetworkAndBroadcast: true }),
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await api.post(
          'ipprefixpools',
          pool('IPPrefixPool', 'v6', { prefixes: ['2001:db8::/48'], allocationPrefixLength: 64 }),
        )
      ).status,
    ).toBe(201);
  });

  it('shows the value the next claim gets, then that claim gets it', async () => {
    expect(await preview('indexpools/asn/preview')).toEqual(['64512']);
    const claimed = await api.post('claims', claim('a1', { kind: 'IndexPool', name: 'asn' }));
    expect(claimed.body.status.value).toBe('64512');
    await eventually(async () =>
      expect(await preview('indexpools/asn/preview?count=3')).toEqual(['64513', '64514', '64515']),
    );
  });

  it('skips held values and honours within and reserved', async () => {
    await api.post('claims', claim('n1', { kind: 'IPAddressPool', name: 'subnet' }));
    await eventually(async () =>
      expect(await preview('ipaddresspools/subnet/preview?count=10')).toEqual([
        '10.1.0.2',
        '10.1.0.3',
        '10.1.0.4',
        '10.1.0.5',
        '10.1.0.6',
      ]),
    );
    expect(await preview('ipaddresspools/subnet/preview?count=2&reserved=10.1.0.2,10.1.0.3')).toEqual([
      '10.1.0.4',
      '10.1.0.5',
    ]);
    expect(await preview('ipaddresspools/subnet/preview?count=5&within=10.1.0.4/30')).toEqual([
      // within's own first and last address are left out too, as the pool leaves out its own
      '10.1.0.5',
      '10.1.0.6',
    ]);
  });

  it('writes nothing', async () => {
    // Both readers of the stream done with what came before (the history function writes a moment after
    // every change), so what the feed shows from here is the preview's own.
    await allot.stream!.drained();
    await allot.history!.drained();
    const written: unknown[] = [];
    const feed = await allot.store.changes(allot.table.tableName);
    const stop = feed.onChange((change) => written.push(change));
    // DynamoDB Local's feed reads the stream from its start: what came before the preview is not its.
    await feed.caughtUp();
    written.length = 0;
    try {
      const values = await preview('ipprefixpools/v6/preview?count=4');
      expect(values).toEqual([
        '2001:db8::/64',
        '2001:db8:0:1::/64',
        '2001:db8:0:2::/64',
        '2001:db8:0:3::/64',
      ]);
      await feed.caughtUp();
    } finally {
      stop();
      await feed.close();
    }
    expect(written).toEqual([]);
    expect((await api.get('ipprefixes?pool=v6')).body.items).toEqual([]);
  });

  it('answers 404 for a missing pool, 400 for a malformed count, 422 for a bad prefixLength', async () => {
    expectFailure(await api.get('indexpools/nope/preview'), 404, 'NotFound');
    expectFailure(await api.get('indexpools/asn/preview?count=0'), 400, 'BadRequest');
    expectFailure(await api.get('indexpools/asn/preview?count=101'), 400, 'BadRequest');
    expectFailure(await api.get('indexpools/asn/preview?count=x'), 400, 'BadRequest');
    expectFailure(await api.get('ipprefixpools/v6/preview?prefixLength=abc'), 400, 'BadRequest');
    const wrong = await api.get('ipprefixpools/v6/preview?prefixLength=56');
    expectFailure(wrong, 422, 'Invalid');
    expect(wrong.body.details.causes[0].field).toBe('prefixLength');
    expectFailure(await api.get('indexpools/asn/preview?prefixLength=24'), 422, 'Invalid');
    expectFailure(await api.get('ipaddresspools/subnet/preview?within=10.9.0.0/24'), 422, 'Invalid');
  });
});
