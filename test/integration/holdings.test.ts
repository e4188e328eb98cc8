/**
 * Who held a value, and when (api.md, "The history of a value"): the holdings the history function keeps
 * from the allocation objects' records, read by value, by instant, by window, by pool and by claim; on
 * both stores. A holding survives its claim's release, Retain and a rebind, the object's deletion and the
 * pool's, and is written once however often its record comes.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { holdingKeys, holdingStart } from '../../lib/store/keys.ts';
import { sweepNamespace } from '../../lib/service/repair/sweep.ts';
import { claim, client, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

const { allot, api } = useTestAllot();
const ref = (name: string) => ({ kind: 'IndexPool', name });

/** The pool's holdings of a value, once the history function has written `count` of them. */
async function holdingsOf(pool: string, query: string, count: number) {
  return eventually(async () => {
    const answer = await api.get(`indexpools/${pool}/history?${query}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.items).toHaveLength(count);
    return answer.body.items as Record<string, any>[];
  });
}

describe('the history of a value', () => {
  it('keeps who held a value after the claim is released, newest first, and what held it at an instant', async () => {
    await api.put('indexpools/asn', indexPool('asn', ['64512..64513']));
    const first = await api.post('claims', claim('leaf1', ref('asn')));
    expect(first.body.status.value).toBe('64512');
    await holdingsOf('asn', 'value=64512', 1);
    expect((await api.delete('claims/leaf1')).status).toBe(200);
    const [released] = await holdingsOf('asn', 'value=64512', 1).then(() =>
      eventually(async () => {
        const items = await holdingsOf('asn', 'value=64512', 1);
        expect(items[0]!.ended).toBe('Released');
        return items;
      }),
    );
    expect(released).toMatchObject({
      value: '64512',
      pool: { kind: 'IndexPool', name: 'asn' },
      namespace: 'default',
      allocation: { name: 'asn-64512' },
      claim: { namespace: 'default', name: 'leaf1', uid: first.body.metadata.uid },
      ended: 'Released',
    });
    expect(Date.parse(released!.until)).toBeGreaterThanOrEqual(Date.parse(released!.from));

    const second = await api.post('claims', claim('leaf2', ref('asn'), { value: '64512' }));
    expect(second.body.status.value).toBe('64512');
    const both = await holdingsOf('asn', 'value=64512', 2);
    expect(both.map((h) => h.claim.name)).toEqual(['leaf2', 'leaf1']);
    expect(both[0]!.until).toBeUndefined();
    // At the first holding's start: the first claim; long before: nobody; a value never held: nobody.
    expect((await holdingsOf('asn', `value=64512&at=${released!.from}`, 1))[0]!.claim.name).toBe('leaf1');
    await holdingsOf('asn', 'value=64512&at=2001-01-01T00:00:00Z', 0);
    await holdingsOf('asn', 'value=64513', 0);
    // The pool's and the claim's views.
    expect((await holdingsOf('asn', '', 2)).map((h) => h.claim.name)).toEqual(['leaf2', 'leaf1']);
    expect((await holdingsOf('asn', 'claim=leaf1', 1))[0]!.ended).toBe('Released');
    const byClaim = await api.get('claims/leaf1/history');
    expect(byClaim.status).toBe(200);
    expect(byClaim.body.items).toHaveLength(1);
  });

  it('follows Retain, a rebind, a deletion by hand and a cascade, each holding ended once', async () => {
    // Shared, so its cascade marks it first (a cascade of a pool shared with nobody is not marked:
    // docs/history.md says what the history then reads).
    await api.put(
      'indexpools/vni',
      indexPool('vni', ['5000..5009'], { reclaimPolicy: 'Retain', sharedWith: [{ namespace: 'tenants' }] }),
    );
    const made = await api.post('claims', claim('tenant-a', ref('vni')));
    const value = made.body.status.value as string;
    await holdingsOf('vni', `value=${value}`, 1);
    await api.delete('claims/tenant-a');
    // Retain: the claim's holding ends Released, and the object holds the value for nobody.
    const retained = await eventually(async () => {
      const items = await holdingsOf('vni', `value=${value}`, 2);
      expect(items[1]).toMatchObject({ claim: { name: 'tenant-a' }, ended: 'Released' });
      expect(items[0]!.claim).toBeUndefined();
      return items;
    });
    expect(retained[0]!.from).toBe(retained[1]!.until);
    // The object allows binding, and the claim made again binds it: the unbound holding ends Bound.
    const object = (await api.get(`indices/vni-${value}`)).body;
    object.metadata.annotations = { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' };
    expect((await api.put(`indices/vni-${value}`, object)).status).toBe(200);
    const again = await api.post('claims', claim('tenant-a', ref('vni')));
    expect(again.body.status.value).toBe(value);
    await eventually(async () => {
      const items = await holdingsOf('vni', `value=${value}`, 3);
      expect(items[1]!.ended).toBe('Bound');
      expect(items[0]!.claim.uid).toBe(again.body.metadata.uid);
    });
    // An object deleted by hand while its claim held it; then the pool, with a cascade.
    const other = await api.post('claims', claim('tenant-b', ref('vni')));
    const otherValue = other.body.status.value as string;
    await holdingsOf('vni', `value=${otherValue}`, 1);
    const otherObject = (await api.get(`indices/vni-${otherValue}`)).body;
    expect((await api.delete(`indices/vni-${otherValue}`)).status).toBe(200);
    // (Its claim then allocates again, perhaps the same value.)
    await eventually(async () => {
      const items = (await api.get(`indexpools/vni/history?value=${otherValue}`)).body.items;
      const ended = items.filter((h: Record<string, any>) => h.allocation.uid === otherObject.metadata.uid);
      expect(ended.map((h: Record<string, any>) => h.ended)).toEqual(['Deleted']);
    });
    expect((await api.delete('indexpools/vni?cascade=true')).status).toBe(200);
    await eventually(async () => {
      const items = await holdingsOf('vni', `value=${value}`, 3);
      expect(items[0]!.ended).toBe('PoolDeleted');
    });
    // Every holding of the pool ended once, and the pool's history outlives the pool.
    await eventually(async () => {
      const all = (await api.get('indexpools/vni/history')).body.items as Record<string, any>[];
      expect(all.filter((h) => h.until === undefined)).toEqual([]);
      expect(new Set(all.map((h) => `${h.from}|${h.allocation.uid}|${h.claim?.uid}`)).size).toBe(all.length);
    });
  });

  it('answers 400 to a malformed value, instant, window or limit, and pages with continue', async () => {
    await api.put('indexpools/vlan', indexPool('vlan', ['100..199']));
    for (const query of [
      'value=abc',
      'at=yesterday',
      'since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z',
      'limit=0',
      'continue=@@',
      'at=2026-01-01T00:00:00Z&since=2026-01-01T00:00:00Z',
    ]) {
      const answer = await api.get(`indexpools/vlan/history?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    }
    for (let i = 0; i < 3; i++) await api.post('claims', claim(`vlan-${i}`, ref('vlan')));
    await holdingsOf('vlan', '', 3);
    const first = await api.get('indexpools/vlan/history?limit=2');
    expect(first.body.items).toHaveLength(2);
    const rest = await api.get(`indexpools/vlan/history?limit=2&continue=${first.body.metadata.continue}`);
    expect(rest.body.items).toHaveLength(1);
    const values = [...first.body.items, ...rest.body.items].map((h: Record<string, any>) => h.value).sort();
    expect(values).toEqual(['100', '101', '102']);
    // Another namespace's claim of the same name has its own history.
    expect((await client(() => allot.url, 'other').get('claims/vlan-0/history')).body.items).toEqual([]);
  });

  it('is mended by the repair sweep when records were lost: an object with no open holding, a holding with no object', async () => {
    await api.put('indexpools/lost', indexPool('lost', ['1..9']));
    const kept = await api.post('claims', claim('kept', ref('lost')));
    const value = kept.body.status.value as string;
    const [open] = await holdingsOf('lost', `value=${value}`, 1);
    // Its records lost for good: the holding's items are gone. And one left open for an object that went.
    const pool = { namespace: 'default', kind: 'IndexPool' as const, name: 'lost' };
    const [stored] = await allot.table.holdings.latestOfValue(pool, value, 1);
    const keys = holdingKeys(pool, value, open!.claim, stored!.start);
    for (const key of [keys.byValue, keys.byPool, keys.byClaim!, keys.open])
      await allot.table.doc.send(new DeleteCommand({ TableName: allot.table.tableName, Key: key }));
    const from = new Date(Date.now() - 3_600_000).toISOString();
    await allot.table.holdings.start({
      holding: {
        value: '9',
        pool: { kind: 'IndexPool', name: 'lost' },
        namespace: 'default',
        allocation: { name: 'lost-9', uid: 'gone' },
        from,
      },
      start: holdingStart(from, '1'),
    });
    await holdingsOf('lost', `value=${value}`, 0);
    // Past the grace period (the history function may be reading a record still), the sweep mends both.
    const later = Date.now() + 60_000;
    const clock = vi.spyOn(Date, 'now').mockReturnValue(later);
    try {
      const report = await sweepNamespace({ table: allot.table }, 'default', { recheckMs: 0 });
      expect(report.fixed.lostHolding).toBe(2);
      expect(
        (await sweepNamespace({ table: allot.table }, 'default', { recheckMs: 0 })).found.lostHolding,
      ).toBe(0);
    } finally {
      clock.mockRestore();
    }
    const [again] = await holdingsOf('lost', `value=${value}`, 1);
    expect(again).toMatchObject({ claim: { name: 'kept', uid: kept.body.metadata.uid } });
    expect(again!.until).toBeUndefined();
    expect((await holdingsOf('lost', 'value=9', 1))[0]).toMatchObject({ ended: 'Deleted' });
    // Released later as any other: the sweep's holding ends once.
    await api.delete('claims/kept');
    await eventually(async () =>
      expect((await holdingsOf('lost', `value=${value}`, 1))[0]!.ended).toBe('Released'),
    );
  });
});
