/**
 * Who held a value, and when (api.md, "The history of a value"): the holdings the history function keeps
 * from the allocation objects' records, read by value, by instant, by window, by pool and by claim; on
 * both stores. A holding survives its claim's release, Retain and a rebind, the object's deletion and the
 * pool's, and is written once however often its record comes.
 */
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { holdingKeys, holdingStart, type PoolId } from '../../lib/store/keys.ts';
import type { ItemKey } from '../../lib/domain/objects/records.ts';
import type { Holdings } from '../../lib/store/holdings.ts';
import { sweepNamespace } from '../../lib/service/repair/sweep.ts';
import { claim, client, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

const { allot, api } = useTestAllot();

/** A pool's open marks, as the repair sweep reads them. */
async function openMarks(holdings: Holdings, pool: PoolId) {
  const open = [];
  for await (const stored of holdings.open(pool)) open.push(stored);
  return open;
}
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

/**
 * A pool of its own (IndexPool `name`, values 1..9) with one claim of that name, once its holding is
 * written: the claim as made, its value and holding, and the holding's keys (to lose items of it).
 */
async function heldClaim(name: string, spec: Record<string, unknown> = {}) {
  await api.put(`indexpools/${name}`, indexPool(name, ['1..9'], spec));
  const made = await api.post('claims', claim(name, ref(name)));
  const value = made.body.status.value as string;
  const [held] = await holdingsOf(name, `value=${value}`, 1);
  const pool = { namespace: 'default', kind: 'IndexPool' as const, name };
  const [stored] = await allot.table.holdings.latestOfValue(pool, value, 1);
  return {
    made,
    value,
    held: held!,
    pool,
    stored: stored!,
    keys: holdingKeys(pool, value, held!.claim, stored!.start),
  };
}

/** Deletes items, as a record lost for good or a write cut short leaves the table. */
async function lose(...keys: ItemKey[]) {
  for (const key of keys)
    await allot.table.doc.send(new DeleteCommand({ TableName: allot.table.tableName, Key: key }));
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

  it('mends at once, after a restart of a reader without a journal, what was lost before the restart', async () => {
    const { made, value, keys } = await heldClaim('restarted');
    await lose(keys.byValue, keys.byPool, keys.byClaim!, keys.open);
    const sweep = (historySince?: number) =>
      sweepNamespace({ table: allot.table }, 'default', { recheckMs: 0, historySince });
    // Within the grace period the record may still come, unless the reader began after the change.
    expect((await sweep()).found.lostHolding).toBe(0);
    expect((await sweep(Date.now() + 2_000)).fixed.lostHolding).toBe(1);
    const [again] = await holdingsOf('restarted', `value=${value}`, 1);
    expect(again).toMatchObject({ claim: { uid: made.body.metadata.uid } });
    expect(again!.until).toBeUndefined();
  });

  it('is not misled by an object that changed while the sweep walked: it starts and ends nothing', async () => {
    // Found by the crash test: the sweep saw a Retain object bound to its claim, the claim was released
    // and the history function recorded it, and then the sweep read the open holdings and started the
    // released claim's holding again (and, past no grace, would end the object's new unbound one).
    const { made, value } = await heldClaim('walked', { reclaimPolicy: 'Retain' });
    const read = allot.table.holdings.open.bind(allot.table.holdings);
    let releasedMeanwhile = false;
    const between = vi.spyOn(allot.table.holdings, 'open').mockImplementation(async function* (pool) {
      if (pool.name === 'walked' && !releasedMeanwhile) {
        releasedMeanwhile = true;
        expect((await api.delete('claims/walked')).status).toBe(200);
        await eventually(async () =>
          expect((await holdingsOf('walked', `value=${value}`, 2))[0]!.claim).toBeUndefined(),
        );
      }
      yield* read(pool);
    });
    try {
      const report = await sweepNamespace({ table: allot.table }, 'default', { recheckMs: 0, graceMs: 0 });
      expect(releasedMeanwhile).toBe(true);
      expect(report.fixed.lostHolding).toBe(0);
    } finally {
      between.mockRestore();
    }
    const [unbound, released] = await holdingsOf('walked', `value=${value}`, 2);
    expect(released).toMatchObject({ claim: { uid: made.body.metadata.uid }, ended: 'Released' });
    expect(unbound!.claim).toBeUndefined();
    expect(unbound!.until).toBeUndefined();
  });

  it('finishes a start or an end the history function was killed in the middle of', async () => {
    // Found by the crash test: killed between a holding's open mark and its copies, the local server's
    // history function (no journal with dynalite) never came back to it, and the sweep took the mark for
    // the holding.
    const { value, held, pool, stored, keys } = await heldClaim('halfway');
    const send = (command: PutCommand | UpdateCommand) => allot.table.doc.send(command as never);
    await lose(keys.byValue, keys.byPool, keys.byClaim!);
    await holdingsOf('halfway', `value=${value}`, 0);
    const sweep = () => sweepNamespace({ table: allot.table }, 'default', { recheckMs: 0, graceMs: 0 });
    expect((await sweep()).fixed.lostHolding).toBe(1);
    expect(await holdingsOf('halfway', `value=${value}`, 1)).toEqual([held]);
    // Released: then as if the end had written the value's copy only, and not yet taken the mark away.
    await api.delete('claims/halfway');
    const [ended] = await eventually(async () => {
      const items = (await api.get('indexpools/halfway/history')).body.items;
      expect(items[0]!.until).toBeDefined();
      expect(await openMarks(allot.table.holdings, pool)).toEqual([]);
      return items;
    });
    await send(
      new UpdateCommand({
        TableName: allot.table.tableName,
        Key: keys.byPool,
        UpdateExpression: 'REMOVE #h.#until, #h.#ended',
        ExpressionAttributeNames: { '#h': 'holding', '#until': 'until', '#ended': 'ended' },
      }),
    );
    await send(
      new PutCommand({
        TableName: allot.table.tableName,
        Item: { ...keys.open, t: 'holding-open', start: stored.start, holding: held },
      }),
    );
    expect((await api.get('indexpools/halfway/history')).body.items).toEqual([held]);
    expect((await sweep()).fixed.lostHolding).toBe(1);
    expect((await api.get('indexpools/halfway/history')).body.items).toEqual([ended]);
    expect((await sweep()).found.lostHolding).toBe(0);
  });

  it('keeps one open holding per object: a record again after its end, and the sweep’s start beside the record’s', async () => {
    const { value, held, pool } = await heldClaim('twice');
    const openOf = () => openMarks(allot.table.holdings, pool);
    // The sweep started the holding too, at the moment the history function did (each read the other's
    // absence): the sweep's goes, the record's stays.
    const swept = new Date().toISOString();
    await allot.table.holdings.start({
      holding: { ...(held as any), from: swept },
      start: holdingStart(swept, '0'),
    });
    expect(await openOf()).toHaveLength(2);
    const report = await sweepNamespace({ table: allot.table }, 'default', { recheckMs: 0, graceMs: 0 });
    expect(report.fixed.lostHolding).toBe(1);
    const [kept] = await openOf();
    expect((await openOf()).map((stored) => stored.holding.from)).toEqual([held.from]);
    expect(await holdingsOf('twice', `value=${value}`, 1)).toEqual([held]);
    // Released; then the claim's first record comes again: its holding stays ended, and not open.
    await api.delete('claims/twice');
    await eventually(async () =>
      expect((await holdingsOf('twice', `value=${value}`, 1))[0]!.until).toBeDefined(),
    );
    await allot.table.holdings.start(kept!);
    expect(await openOf()).toEqual([]);
    expect((await holdingsOf('twice', `value=${value}`, 1))[0]!.ended).toBe('Released');
  });
});

type Client = ReturnType<typeof client>;
type Held = Record<string, any>;

/** A history's answer, once the history function has written `count` holdings of it. */
async function historyOf(from: Client, path: string, count: number): Promise<Held[]> {
  return eventually(async () => {
    const answer = await from.get(path);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.items).toHaveLength(count);
    return answer.body.items as Held[];
  });
}

/** Every page of a history, `limit` at a time. */
async function allPages(from: Client, path: string, limit: number): Promise<Held[]> {
  const items: Held[] = [];
  let next: string | undefined;
  do {
    const answer = await from.get(`${path}&limit=${limit}${next ? `&continue=${next}` : ''}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.items.length).toBeLessThanOrEqual(limit);
    items.push(...answer.body.items);
    next = answer.body.metadata.continue;
  } while (next);
  return items;
}

const values = (items: Held[]) => items.map((h) => h.value);

describe('the history of a range or CIDR (?within=)', () => {
  it('answers an address pool’s holdings inside a CIDR, by value, each value newest first', async () => {
    await api.put('ipaddresspools/hosts', {
      kind: 'IPAddressPool',
      metadata: { name: 'hosts' },
      spec: { prefixes: ['10.1.0.0/24'] },
    });
    const hosts = { kind: 'IPAddressPool', name: 'hosts' };
    for (const [name, value] of [
      ['web', '10.1.0.9'],
      ['db', '10.1.0.5'],
      ['far', '10.1.0.130'],
    ])
      expect((await api.post('claims', claim(name!, hosts, { value }))).status).toBe(201);
    await historyOf(api, 'ipaddresspools/hosts/history', 3);
    await api.delete('claims/db');
    await historyOf(api, 'ipaddresspools/hosts/history?value=10.1.0.5&until=2100-01-01T00:00:00Z', 1);
    await eventually(async () =>
      expect((await api.get('claims/db/history')).body.items[0].ended).toBe('Released'),
    );
    await api.post('claims', claim('db2', hosts, { value: '10.1.0.5' }));
    const low = await historyOf(api, 'ipaddresspools/hosts/history?within=10.1.0.0/25', 3);
    expect(low.map((h) => [h.value, h.claim.name])).toEqual([
      ['10.1.0.5', 'db2'],
      ['10.1.0.5', 'db'],
      ['10.1.0.9', 'web'],
    ]);
    expect(values(await historyOf(api, 'ipaddresspools/hosts/history?within=10.1.0.128/25', 1))).toEqual([
      '10.1.0.130',
    ]);
    await historyOf(api, 'ipaddresspools/hosts/history?within=10.1.0.12/30', 0);
    // With the other filters: a claim's name, an instant (who held each value then).
    expect(
      values(await historyOf(api, 'ipaddresspools/hosts/history?within=10.1.0.0/24&claim=db', 1)),
    ).toEqual(['10.1.0.5']);
    const now = new Date().toISOString();
    const then = await historyOf(api, `ipaddresspools/hosts/history?within=10.1.0.0/24&at=${now}`, 3);
    expect(then.map((h) => h.claim.name)).toEqual(['db2', 'web', 'far']);
    for (const within of ['10.1.0.0', '1..5', '2001:db8::/64', '10.1.0.0/33'])
      expect((await api.get(`ipaddresspools/hosts/history?within=${within}`)).body, within).toMatchObject({
        kind: 'Status',
        code: 400,
        reason: 'BadRequest',
      });
  });

  it('answers an index range, pages across values, and refuses a malformed range', async () => {
    await api.put('indexpools/tags', indexPool('tags', ['1..40']));
    for (const value of ['3', '7', '12', '13', '20', '30'])
      await api.post('claims', claim(`tag-${value}`, ref('tags'), { value }));
    await historyOf(api, 'indexpools/tags/history', 6);
    await api.delete('claims/tag-12');
    await eventually(async () =>
      expect((await api.get('claims/tag-12/history')).body.items[0].ended).toBe('Released'),
    );
    await api.post('claims', claim('tag-12b', ref('tags'), { value: '12' }));
    const inside = await historyOf(api, 'indexpools/tags/history?within=5..20', 5);
    expect(inside.map((h) => [h.value, h.claim.name])).toEqual([
      ['7', 'tag-7'],
      ['12', 'tag-12b'],
      ['12', 'tag-12'],
      ['13', 'tag-13'],
      ['20', 'tag-20'],
    ]);
    // The Kubernetes path family serves the same operation.
    const kube = await api.get(
      '/apis/pool.networking.metal.ironcore.dev/v1alpha1/namespaces/default/indexpools/tags/history?within=5..20',
    );
    expect(kube.body.items).toEqual(inside);
    // Page by page, across values and inside one: the same holdings in the same order.
    for (const limit of [1, 2, 3])
      expect(await allPages(api, 'indexpools/tags/history?within=1..40', limit), String(limit)).toEqual(
        await historyOf(api, 'indexpools/tags/history?within=1..40', 7),
      );
    expect(values(await historyOf(api, 'indexpools/tags/history?within=12', 2))).toEqual(['12', '12']);
    for (const query of ['within=20..5', 'within=10.0.0.0/8', 'within=a..b', 'within=1..5&value=3'])
      expect((await api.get(`indexpools/tags/history?${query}`)).body, query).toMatchObject({
        code: 400,
        reason: 'BadRequest',
      });
    // A token of another partition is refused, not read.
    const byTime = await api.get('indexpools/tags/history?limit=1');
    const mixed = await api.get(
      `indexpools/tags/history?within=1..40&continue=${byTime.body.metadata.continue}`,
    );
    expect(mixed.status).toBe(400);
  });

  it('answers a prefix pool’s prefixes overlapping a CIDR: inside it, and containing it', async () => {
    await api.put('ipprefixpools/nets', {
      kind: 'IPPrefixPool',
      metadata: { name: 'nets' },
      spec: { prefixes: ['10.8.0.0/16'], allocationPrefixLengths: { min: 20, max: 28, default: 24 } },
    });
    const nets = { kind: 'IPPrefixPool', name: 'nets' };
    // A /20, a /24 inside it and a /28 inside that, each held and released in turn (prefixes held at
    // once never overlap); then a /24 apart.
    for (const [name, value] of [
      ['big', '10.8.16.0/20'],
      ['mid', '10.8.20.0/24'],
      ['small', '10.8.20.16/28'],
    ]) {
      expect((await api.post('claims', claim(name!, nets, { value }))).status).toBe(201);
      await historyOf(api, `ipprefixpools/nets/history?value=${value}`, 1);
      await api.delete(`claims/${name}`);
      await eventually(async () =>
        expect((await api.get(`claims/${name}/history`)).body.items[0].ended).toBe('Released'),
      );
    }
    expect((await api.post('claims', claim('apart', nets, { value: '10.8.32.0/24' }))).status).toBe(201);
    await historyOf(api, 'ipprefixpools/nets/history', 4);
    const names = (items: Held[]) => items.map((h) => h.claim.name);
    // Contains it at a network before its own (the /20), at its own (the /24), and inside it (the /28).
    expect(names(await historyOf(api, 'ipprefixpools/nets/history?within=10.8.20.0/26', 3))).toEqual([
      'big',
      'mid',
      'small',
    ]);
    expect(names(await historyOf(api, 'ipprefixpools/nets/history?within=10.8.20.0/24', 3))).toEqual([
      'big',
      'mid',
      'small',
    ]);
    // The /20 at the CIDR's own network, and nothing inside that was held.
    expect(names(await historyOf(api, 'ipprefixpools/nets/history?within=10.8.16.0/24', 1))).toEqual(['big']);
    expect(names(await historyOf(api, 'ipprefixpools/nets/history?within=10.8.0.0/16', 4))).toEqual([
      'big',
      'mid',
      'small',
      'apart',
    ]);
    expect(names(await allPages(api, 'ipprefixpools/nets/history?within=10.8.20.20/32', 1))).toEqual([
      'big',
      'mid',
      'small',
    ]);
    await historyOf(api, 'ipprefixpools/nets/history?within=10.8.64.0/18', 0);
    for (const within of ['10.8.0.0', '2001:db8::/48', '1..2'])
      expect((await api.get(`ipprefixpools/nets/history?within=${within}`)).status, within).toBe(400);
  });
});

describe('a shared pool’s history, read by a tenant', () => {
  it('answers a tenant its own namespace’s holdings only, with every filter, and a stranger nothing', async () => {
    await api.put(
      'indexpools/public',
      indexPool('public', ['1..20'], { sharedWith: [{ namespace: 'acme' }, { namespace: 'globex' }] }),
    );
    const acme = client(() => allot.url, 'acme');
    const globex = client(() => allot.url, 'globex');
    const stranger = client(() => allot.url, 'stranger');
    const shared = { kind: 'IndexPool', name: 'public', namespace: 'default' };
    expect((await api.post('claims', claim('own', ref('public'), { value: '1' }))).status).toBe(201);
    expect((await acme.post('claims', claim('a1', shared, { value: '2' }))).status).toBe(201);
    expect((await globex.post('claims', claim('g1', shared, { value: '3' }))).status).toBe(201);
    expect((await acme.post('claims', claim('a2', shared, { value: '4' }))).status).toBe(201);
    await historyOf(api, 'indexpools/public/history', 4);
    await acme.delete('claims/a1');
    // The value acme released, held next by globex.
    await eventually(async () =>
      expect((await acme.get('claims/a1/history')).body.items[0].ended).toBe('Released'),
    );
    expect((await globex.post('claims', claim('g2', shared, { value: '2' }))).status).toBe(201);
    await historyOf(api, 'indexpools/public/history', 5);

    const tenant = 'indexpools/public/history?poolNamespace=default';
    const mine = await historyOf(acme, tenant, 2);
    expect(mine.map((h) => [h.claim.namespace, h.claim.name])).toEqual([
      ['acme', 'a2'],
      ['acme', 'a1'],
    ]);
    expect((await historyOf(globex, tenant, 2)).map((h) => h.claim.name)).toEqual(['g2', 'g1']);
    // Every filter, still of its own only.
    expect((await historyOf(acme, `${tenant}&value=2`, 1))[0]).toMatchObject({ claim: { name: 'a1' } });
    expect((await historyOf(globex, `${tenant}&value=2`, 1))[0]).toMatchObject({ claim: { name: 'g2' } });
    await historyOf(acme, `${tenant}&value=1`, 0);
    expect(values(await historyOf(acme, `${tenant}&within=1..20`, 2))).toEqual(['2', '4']);
    await historyOf(acme, `${tenant}&claim=g1`, 0);
    await historyOf(acme, `${tenant}&claim=a2`, 1);
    const now = new Date().toISOString();
    expect((await historyOf(acme, `${tenant}&at=${now}`, 1))[0]!.claim.name).toBe('a2');
    expect((await historyOf(acme, `${tenant}&value=2&at=${mine[1]!.from}`, 1))[0]!.claim.name).toBe('a1');
    expect(
      (await allPages(acme, `${tenant}&since=2001-01-01T00:00:00Z`, 1)).map((h) => h.claim.name),
    ).toEqual(['a2', 'a1']);
    // A token of the owner's answer is refused, not read.
    const owners = await api.get('indexpools/public/history?limit=1');
    expect((await acme.get(`${tenant}&continue=${owners.body.metadata.continue}`)).status).toBe(400);
    // A namespace the pool is not shared with: what a pool that never existed answers.
    const never = await stranger.get('indexpools/never/history?poolNamespace=default');
    expect(never).toEqual({
      status: 200,
      body: { kind: 'HoldingList', apiVersion: 'v1', items: [], metadata: {} },
    });
    for (const query of ['', '&value=2', '&within=1..20', '&claim=own'])
      expect(await stranger.get(`${tenant}${query}`), query).toEqual(never);
    // The tenant's own path without poolNamespace names a pool of its own namespace: none.
    expect(await acme.get('indexpools/public/history')).toEqual(never);
    // The owner sees every namespace's.
    expect(
      new Set((await historyOf(api, 'indexpools/public/history', 5)).map((h) => h.claim.namespace)),
    ).toEqual(new Set(['default', 'acme', 'globex']));
    expect((await acme.get(`${tenant.replace('default', 'Not_A_Name')}`)).status).toBe(400);
  });
});
