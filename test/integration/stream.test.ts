/**
 * The stream function fed hand-built records (no stream emulation running): duplicates, replays, a
 * partial failure, and a stale REMOVE of a claim that was deleted and recreated under the same name.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createStreamHandler } from '../../functions/stream.ts';
import { decide, readPool } from '../../lib/service/allocation/decide.ts';
import { refreshPool } from '../../lib/service/stream/reconcile.ts';
import { Table } from '../../lib/store/table.ts';

import { claim, indexPool, useTestAllot, API_VERSION } from '../helpers/allot.ts';
import { allocatingClaim } from '../builders/records.ts';
import { insertRecord, modifyRecord, removeRecord, streamEvent } from '../builders/stream.ts';
import { allocatedState, validState } from './support.ts';
import { objectKey } from '../../lib/store/keys.ts';
import { type ClaimContext } from '../../lib/service/context.ts';

const { allot, api } = useTestAllot({ stream: false });
let stream: ReturnType<typeof createStreamHandler>;

beforeAll(() => {
  stream = createStreamHandler({ table: allot.table });
});

type Item = Record<string, unknown> & { pk: string; sk: string };

const claimItem = async (name: string) =>
  (await allot.table.get<Item>(objectKey('default', 'claims', name)))!;
const poolItem = async (resource: 'indexpools', name: string) =>
  (await allot.table.get<Item>(objectKey('default', resource, name)))!;

async function allocationItem(claimName: string): Promise<Item> {
  const claimed = await claimItem(claimName);
  return (await allot.table.get<Item>(claimed.bound as { pk: string; sk: string }))!;
}

async function release(name: string): Promise<Item> {
  const old = await claimItem(name);
  expect((await api.delete(`claims/${name}`)).status).toBe(200);
  return old;
}

describe('stream function', () => {
  it('applies Recycle once when the same REMOVE arrives twice, and counts exactly', async () => {
    await api.post('indexpools', indexPool('dup', ['1..10']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'dup'))));
    await api.post('claims', claim('dup-a', { kind: 'IndexPool', name: 'dup' }));
    await api.post('claims', claim('dup-b', { kind: 'IndexPool', name: 'dup' }));
    const allocation = await allocationItem('dup-a');
    const other = await allocationItem('dup-b');
    await stream(streamEvent(insertRecord(allocation), insertRecord(other), insertRecord(allocation)));
    const old = await release('dup-a');

    const gone = removeRecord(old);
    const result = await stream(streamEvent(gone, gone));
    expect(result.batchItemFailures).toEqual([]);
    expect((await api.get('indices/dup-1')).status).toBe(404);
    await stream(streamEvent(removeRecord(allocation), removeRecord(allocation)));
    const pool = await api.get('indexpools/dup');
    expect(pool.body.status).toMatchObject({ allocated: 1, total: '10', free: '9' });
  });

  it('gives the same result when a whole batch is replayed', async () => {
    await api.post('indexpools', indexPool('replay', ['1..5']));
    await api.post('claims', claim('replay-a', { kind: 'IndexPool', name: 'replay' }));
    const allocation = await allocationItem('replay-a');
    const old = await release('replay-a');
    const batch = streamEvent(insertRecord(allocation), removeRecord(old), removeRecord(allocation));
    await stream(batch);
    const first = await api.get('indexpools/replay');
    await stream(batch);
    await stream(batch);
    const again = await api.get('indexpools/replay');
    expect(again.body.status).toEqual(first.body.status);
    expect(again.body.status).toMatchObject({ allocated: 0, free: '5' });
    expect((await api.get('indices?pool=replay')).body.items).toEqual([]);
  });

  it('reports only the failing record, and the retry completes it', async () => {
    await api.post('indexpools', indexPool('partial', ['1..5']));
    await api.post('claims', claim('partial-a', { kind: 'IndexPool', name: 'partial' }));
    await api.post('claims', claim('partial-b', { kind: 'IndexPool', name: 'partial' }));
    const oldA = await release('partial-a');
    const oldB = await release('partial-b');

    // A client whose GetItem of claim partial-b's allocation fails: a real SDK, with a fault injected.
    const faulty = new DynamoDBClient({
      endpoint: allot.store.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    // Key order spelled out: a store may return the map `bound` with its keys in any order.
    const { pk, sk } = oldB.bound as { pk: string; sk: string };
    const boundB = JSON.stringify({ pk, sk });
    faulty.middlewareStack.add(
      (next) => async (args) => {
        // Before or after the document client's marshalling, the key is the same text.
        const key = (args.input as { Key?: Record<string, unknown> }).Key;
        const text = (value: unknown) =>
          typeof value === 'string' ? value : (value as { S?: string } | undefined)?.S;
        if (key && JSON.stringify({ pk: text(key.pk), sk: text(key.sk) }) === boundB) {
          throw Object.assign(new Error('injected fault'), { name: 'InternalServerError' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'injectFault' },
    );
    const faultyStream = createStreamHandler({
      table: new Table({ tableName: allot.table.tableName, client: faulty }),
    });
    const removeA = removeRecord(oldA);
    const removeB = removeRecord(oldB);
    const result = await faultyStream(streamEvent(removeA, removeB));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: removeB.dynamodb!.SequenceNumber }]);
    expect((await api.get('indices/partial-1')).status).toBe(404);
    expect((await api.get('indices/partial-2')).status).toBe(200);

    const retry = await stream(streamEvent(removeB));
    expect(retry.batchItemFailures).toEqual([]);
    expect((await api.get('indices/partial-2')).status).toBe(404);
  });

  it('never reclaims the allocation of a claim recreated under the same name (Recycle)', async () => {
    await api.post('indexpools', indexPool('stale', ['1..5']));
    await api.post('claims', claim('web', { kind: 'IndexPool', name: 'stale' }));
    const old = await release('web');
    const recreated = await api.post('claims', claim('web', { kind: 'IndexPool', name: 'stale' }));
    expect(recreated.body.status.value).toBe('2');

    await stream(streamEvent(removeRecord(old)));
    await stream(streamEvent(removeRecord(old)));
    expect((await api.get('indices/stale-1')).status).toBe(404);
    const kept = await api.get('indices/stale-2');
    expect(kept.body.spec.claimRef).toEqual({ name: 'web', uid: recreated.body.metadata.uid });
    expect((await api.get('claims/web')).body.status.value).toBe('2');
  });

  it('never unbinds a Retain allocation that a recreated claim rebound, when the old REMOVE comes late', async () => {
    await api.post('indexpools', indexPool('kept', ['1..5'], { reclaimPolicy: 'Retain' }));
    await api.post('indices', {
      apiVersion: API_VERSION,
      kind: 'Index',
      metadata: {
        name: 'kept-3',
        annotations: { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' },
      },
      spec: { poolRef: { kind: 'IndexPool', name: 'kept' }, index: 3, claimRef: { name: 'db' } },
    });
    const first = await api.post('claims', claim('db', { kind: 'IndexPool', name: 'kept' }));
    expect(first.body.status.value).toBe('3');
    const old = await release('db');
    await stream(streamEvent(removeRecord(old)));
    const retained = await api.get('indices/kept-3');
    expect(retained.body.spec.claimRef).toEqual({ name: 'db', uid: '' });

    const again = await api.post('claims', claim('db', { kind: 'IndexPool', name: 'kept' }));
    expect(again.body.status.value).toBe('3');
    await stream(streamEvent(removeRecord(old), removeRecord(old)));
    const rebound = await api.get('indices/kept-3');
    expect(rebound.body.spec.claimRef).toEqual({ name: 'db', uid: again.body.metadata.uid });
  });

  it('binds a waiting claim when an allocation object naming it appears', async () => {
    await api.post('indexpools', indexPool('offer', ['1..1']));
    await api.post('claims', claim('holder', { kind: 'IndexPool', name: 'offer' }));
    const waiting = await api.post(
      'claims',
      claim('late', { kind: 'IndexPool', name: 'offer' }, { value: 7 }),
    );
    expect(waiting.body.status.conditions[0]).toMatchObject({ status: 'False', reason: 'PoolExhausted' });

    await api.post('indices', {
      metadata: {
        name: 'offer-7',
        annotations: { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' },
      },
      spec: { poolRef: { kind: 'IndexPool', name: 'offer' }, index: 7, claimRef: { name: 'late' } },
    });
    const offered = (await allot.table.get<Item>(await allocationKeyOf('offer', 7n)))!;
    await stream(streamEvent(insertRecord(offered)));
    const late = await api.get('claims/late');
    expect(late.body.status).toMatchObject({ value: '7', allocationRef: { name: 'offer-7' } });
  });

  it('finishes a claim whose handler died after writing the claim (Allocating)', async () => {
    await api.post('indexpools', indexPool('crash', ['10..12']));
    const key = objectKey('default', 'claims', 'orphan');
    await allot.table.createObject(key, allocatingClaim('orphan', 'crash', 'u-1'));
    const item = await claimItem('orphan');
    await stream(streamEvent(insertRecord(item)));
    expect((await api.get('claims/orphan')).body.status.value).toBe('10');
    // A duplicate delivery after the fact allocates nothing more.
    await stream(streamEvent(insertRecord(item), modifyRecord(item, await claimItem('orphan'))));
    expect((await api.get('indices?pool=crash')).body.items).toHaveLength(1);
  });
});

describe('pool counts', () => {
  it('starts a new epoch when values are freed, and keeps it while claims only take values', async () => {
    await api.post('indexpools', indexPool('epoch', ['1..5']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'epoch'))));
    await api.post('claims', claim('epoch-a', { kind: 'IndexPool', name: 'epoch' }));
    await api.post('claims', claim('epoch-b', { kind: 'IndexPool', name: 'epoch' }));
    const a = await allocationItem('epoch-a');
    const b = await allocationItem('epoch-b');
    await stream(streamEvent(insertRecord(a)));
    const first = await countsOf('epoch');
    await stream(streamEvent(insertRecord(b)));
    const second = await countsOf('epoch');
    expect(second).toMatchObject({ held: '2', searchFrom: '2', epoch: first.epoch });

    await allot.table.deleteItem({ pk: a.pk, sk: a.sk });
    await stream(streamEvent(removeRecord(a), insertRecord(b)));
    const after = await countsOf('epoch');
    expect(after).toMatchObject({ held: '1', searchFrom: '0' });
    expect(after.epoch).not.toBe(second.epoch);
  });

  it('counts each slot change once when its records come again, in any batch', async () => {
    await api.post('indexpools', indexPool('again', ['1..8']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'again'))));
    for (const name of ['again-a', 'again-b', 'again-c']) {
      await api.post('claims', claim(name, { kind: 'IndexPool', name: 'again' }));
    }
    const [a, b, c] = await Promise.all(['again-a', 'again-b', 'again-c'].map(allocationItem));
    await stream(streamEvent(insertRecord(a!), insertRecord(b!)));
    await stream(streamEvent(insertRecord(b!), insertRecord(c!), insertRecord(a!)));
    expect(await countsOf('again')).toMatchObject({ allocated: 3, held: '3', searchFrom: '3' });
    await allot.table.deleteItem({ pk: b!.pk, sk: b!.sk });
    await stream(streamEvent(removeRecord(b!), removeRecord(b!)));
    await stream(streamEvent(insertRecord(c!), removeRecord(b!)));
    expect(await countsOf('again')).toMatchObject({ allocated: 2, held: '2', searchFrom: '1' });
    expect((await api.get('indexpools/again')).body.status).toMatchObject({ allocated: 2, free: '6' });
  });

  it('counts a batch once when the function dies between any two of its counting writes', async () => {
    // The function dies just before each of its counting writes in turn (the block summary, the directory,
    // the pool's counts); Lambda then delivers the batch again (twice here).
    const counting = (command: { input: Record<string, unknown> }) => {
      const key = command.input.Key as { pk?: string; sk?: string } | undefined;
      const expression = String(command.input.UpdateExpression ?? '');
      return (
        key?.sk === '~' ||
        expression.includes('#c = :counts') ||
        expression.includes('#c.#ap.') ||
        String(key?.pk ?? (command.input.Item as { pk?: string } | undefined)?.pk).startsWith('D#')
      );
    };
    let died = 0;
    for (let dieAt = 0; ; dieAt++) {
      const pool = `dies-${dieAt}`;
      await api.post('indexpools', indexPool(pool, ['1..8']));
      await stream(streamEvent(insertRecord(await poolItem('indexpools', pool))));
      await api.post('claims', claim(`${pool}-a`, { kind: 'IndexPool', name: pool }));
      await api.post('claims', claim(`${pool}-b`, { kind: 'IndexPool', name: pool }));
      const a = await allocationItem(`${pool}-a`);
      const b = await allocationItem(`${pool}-b`);
      const batch = streamEvent(insertRecord(a), insertRecord(b));
      let writes = 0;
      const dying = new DynamoDBClient({
        endpoint: allot.store.endpoint,
        region: 'local',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
        maxAttempts: 1,
      });
      dying.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as Record<string, unknown>;
          const isWrite = /^(Update|Put)/.test(String(context.commandName));
          if (isWrite && counting({ input }) && writes++ === dieAt) {
            throw Object.assign(new Error('the function died'), { name: 'TimeoutError' });
          }
          return next(args);
        },
        { step: 'initialize', name: 'dieAt' },
      );
      const dyingStream = createStreamHandler({
        table: new Table({ tableName: allot.table.tableName, client: dying }),
      });
      const outcome = await dyingStream(batch).catch(() => 'died');
      if (writes <= dieAt) break; // every counting write has had its turn
      died++;
      expect(typeof outcome === 'string' || outcome.batchItemFailures.length > 0).toBe(true);
      await stream(batch);
      await stream(batch);
      expect(await countsOf(pool)).toMatchObject({ allocated: 2, held: '2', searchFrom: '2' });
    }
    // The directory; A: the summary (its markers, an earlier batch's taken away); B: the counts.
    expect(died).toBe(3);
  });

  it('passes a race on to every claim of the pool: counts say contended for a while, and claims spread', async () => {
    await api.post('indexpools', indexPool('raced', ['1..5000']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'raced'))));
    await api.post('claims', claim('raced-a', { kind: 'IndexPool', name: 'raced' }));
    const calm = await allocationItem('raced-a');
    await stream(streamEvent(insertRecord(calm)));
    expect((await countsOf('raced')).contendedUntil).toBeUndefined();

    // An allocation a claim made after losing a race says so; the stream passes it on.
    await api.post('claims', claim('raced-b', { kind: 'IndexPool', name: 'raced' }));
    const racedItem = { ...(await allocationItem('raced-b')), raced: true };
    await allot.table.doc.send(new PutCommand({ TableName: allot.table.tableName, Item: racedItem }));
    await stream(streamEvent(insertRecord(racedItem)));
    const until = Date.parse(String((await countsOf('raced')).contendedUntil));
    expect(until).toBeGreaterThan(Date.now());
    // A new claim now starts at a random point of the next 4,096 values, not at the lowest free one.
    const values = [];
    for (const name of ['raced-c', 'raced-d', 'raced-e']) {
      values.push(
        Number(
          (await api.post('claims', claim(name, { kind: 'IndexPool', name: 'raced' }))).body.status.value,
        ),
      );
    }
    expect(values.some((value) => value > 10)).toBe(true);
  });

  it('spreads a contended instance over more spans once the span at the hint is crowded', async () => {
    await api.post('indexpools', indexPool('crowded', ['0..16383']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'crowded'))));
    const id = { namespace: 'default', kind: 'IndexPool' as const, name: 'crowded' };
    // The stream has counted seven of every eight values of the first span held (the values themselves
    // need not exist here: the summary says they are held, so no search tries them).
    const fill = Array.from({ length: 4096 }, (_, i) => i)
      .filter((i) => i % 8 !== 7)
      .map((i) => ({ record: `fill-${i}`, slot: BigInt(i), family: undefined, present: true }));
    await refreshPool({ table: allot.table }, id, fill);
    const pool = (await readPool({ table: allot.table }, id))!;
    expect(pool.counts?.searchFrom).toBe('7');

    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const ctx: ClaimContext = {
      table: allot.table,
      random,
      contendedUntil: new Map([[pool.metadata.uid, { until: Date.now() + 60_000, spell: 5000 }]]),
    };
    const decideFor = async (name: string) => {
      const decision = await decide(ctx, allocatingClaim(name, 'crowded'), pool);
      return Number(decision.outcome.status.value);
    };
    // An eighth of the hint's span is free (under a quarter): the next search spreads over two spans.
    const first = await decideFor('crowded-0');
    expect(first % 8).toBe(7);
    expect(first).toBeLessThan(4096);
    expect(ctx.spreadSpans?.get(pool.metadata.uid)).toBe(2);
    const values = [first];
    for (let i = 1; i < 12; i++) values.push(await decideFor(`crowded-${i}`));
    // It never spreads past the pool, and some searches now take values from the spans past the hint's.
    expect(values.every((value) => value <= 16383 && (value >= 4096 || value % 8 === 7))).toBe(true);
    expect(values.some((value) => value >= 4096)).toBe(true);
    expect(new Set(values).size).toBe(values.length);
  });

  it('forgets an applied id once its record can no longer come (a stream keeps records 24 hours)', async () => {
    await api.post('indexpools', indexPool('forget', ['1..8']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'forget'))));
    // Ids left by batches whose function died before dropping them, and whose records went to the DLQ.
    const now = Math.floor(Date.now() / 1000);
    await allot.table.doc.send(
      new UpdateCommand({
        TableName: allot.table.tableName,
        Key: objectKey('default', 'indexpools', 'forget'),
        UpdateExpression: 'SET counts.applied = :applied',
        ExpressionAttributeValues: { ':applied': { stale: now - 26 * 3600, recent: now - 3600 } },
      }),
    );
    await api.post('claims', claim('forget-a', { kind: 'IndexPool', name: 'forget' }));
    await stream(streamEvent(insertRecord(await allocationItem('forget-a'))));
    const counts = await countsOf('forget');
    // The batch's own id stays, with its marker, until the next batch that writes the group.
    const [own] = Object.keys(counts.applied as object).filter((id) => id !== 'recent');
    expect(counts.applied).toEqual({ recent: now - 3600, [own!]: expect.any(Number) });
    expect(counts).toMatchObject({ allocated: 1, held: '1' });
    const group = { family: undefined, group: 0n };
    const pool = { namespace: 'default', kind: 'IndexPool' as const, name: 'forget' };
    expect([...(await allot.table.summaries.readGroup(pool, group)).pending.keys()]).toEqual([own]);
    // The next batch takes the counted marker away in its summary's write, and its id in its counts'.
    await api.post('claims', claim('forget-b', { kind: 'IndexPool', name: 'forget' }));
    await stream(streamEvent(insertRecord(await allocationItem('forget-b'))));
    const next = await countsOf('forget');
    const [second] = Object.keys(next.applied as object).filter((id) => id !== 'recent');
    expect(second).not.toBe(own);
    expect(next.applied).toEqual({ recent: now - 3600, [second!]: expect.any(Number) });
    expect([...(await allot.table.summaries.readGroup(pool, group)).pending.keys()]).toEqual([second]);
    expect(next).toMatchObject({ allocated: 2, held: '2' });
  });

  it('recounts from the block summaries when the spec changes', async () => {
    await api.post('indexpools', indexPool('respec', ['1..8']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'respec'))));
    for (const name of ['respec-a', 'respec-b', 'respec-c']) {
      await api.post('claims', claim(name, { kind: 'IndexPool', name: 'respec' }));
    }
    const items = await Promise.all(['respec-a', 'respec-b', 'respec-c'].map(allocationItem));
    await stream(streamEvent(...items.map((item) => insertRecord(item))));
    const before = await poolItem('indexpools', 'respec');
    const updated = await api.put('indexpools/respec', indexPool('respec', ['2..8']));
    expect(updated.status).toBe(200);
    await stream(streamEvent(modifyRecord(before, await poolItem('indexpools', 'respec'))));
    expect(await countsOf('respec')).toMatchObject({ allocated: 3, held: '2', searchFrom: '2' });
    expect((await api.get('indexpools/respec')).body.status).toMatchObject({ total: '7', free: '5' });
  });
});

async function countsOf(pool: string) {
  return ((await poolItem('indexpools', pool)) as unknown as { counts: Record<string, unknown> }).counts;
}

async function allocationKeyOf(pool: string, index: bigint) {
  const { allocationKey } = await import('../../lib/store/keys.ts');
  return allocationKey({ namespace: 'default', kind: 'IndexPool', name: pool }, 'Index', { slot: index });
}

describe('a pool deleted', () => {
  it('tells the claims that waited for one of its values that they now wait for the pool', async () => {
    await api.post('indexpools', indexPool('gone', ['1..10']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'gone'))));
    const waiting = await api.post(
      'claims',
      claim('gone-a', { kind: 'IndexPool', name: 'gone' }, { within: '20..30' }),
    );
    expect(allocatedState(waiting.body)).toBe('False/PoolExhausted');
    const pool = await poolItem('indexpools', 'gone');
    expect((await api.delete('indexpools/gone')).status).toBe(200);
    await stream(streamEvent(removeRecord(pool)));
    expect(allocatedState((await api.get('claims/gone-a')).body)).toBe('False/PoolNotFound');
  });
});

describe('a pool deleted while a claim allocates from it', () => {
  it('leaves the claim its value: the object stays, PoolNotFound, and a pool made again does not hand it out', async () => {
    await api.post('indexpools', indexPool('doomed', ['1..10']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'doomed'))));
    const pool = await poolItem('indexpools', 'doomed');
    const answer = await api.post('claims', claim('doomed-a', { kind: 'IndexPool', name: 'doomed' }));
    const value = answer.body.status.value as string;
    const allocation = await allocationItem('doomed-a');
    const objectName = (allocation.metadata as { name: string }).name;
    // The delete checked for allocation objects before the claim's put landed; then it did the rest.
    const id = { namespace: 'default', kind: 'IndexPool' as const, name: 'doomed' };
    await allot.table.summaries.deleteSummaries(id);
    await allot.table.deleteItem(objectKey('default', 'indexpools', 'doomed'));
    await stream(streamEvent(removeRecord(pool), insertRecord(allocation)));

    const kept = (await api.get('claims/doomed-a')).body;
    expect(allocatedState(kept)).toBe('True/Allocated');
    expect(kept.status.value).toBe(value);
    const object = (await api.get(`indices/${objectName}`)).body;
    expect(validState(object)).toBe('False/PoolNotFound');

    await api.post('indexpools', indexPool('doomed', ['1..10']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'doomed'))));
    const next = await api.post('claims', claim('doomed-b', { kind: 'IndexPool', name: 'doomed' }));
    expect(allocatedState(next.body)).toBe('True/Allocated');
    expect(next.body.status.value).not.toBe(value);
    expect(validState((await api.get(`indices/${objectName}`)).body)).toBe('True/ValueInRange');
  });
});

describe('a settle that lands after its allocation object went', () => {
  it('makes the claim allocate again (the object was removed before the claim named it)', async () => {
    await api.post('indexpools', indexPool('late', ['1..10']));
    await stream(streamEvent(insertRecord(await poolItem('indexpools', 'late'))));
    await api.post('claims', claim('late-a', { kind: 'IndexPool', name: 'late' }));
    const settled = await claimItem('late-a');
    const allocation = await allocationItem('late-a');
    // The object went, and its removal was handled, before the claim's settle: only the settle's record
    // is left to tell.
    await allot.table.deleteItem({ pk: allocation.pk, sk: allocation.sk });
    const { bound: _bound, ...allocating } = settled;
    await stream(streamEvent(modifyRecord({ ...allocating, phase: 'Allocating' }, settled)));

    // It holds a new object (the lowest free value is the one freed, so maybe the same value).
    const claimNow = await claimItem('late-a');
    expect(claimNow.phase).toBe('Allocated');
    const held = (await allot.table.get<Item>(claimNow.bound as { pk: string; sk: string }))!;
    expect((held.metadata as { uid: string }).uid).not.toBe((allocation.metadata as { uid: string }).uid);
    expect((held.spec as { claimRef?: { uid?: string } }).claimRef?.uid).toBe(
      (settled.metadata as { uid: string }).uid,
    );
  });

  it('leaves a claim alone when the object it names is there', async () => {
    await api.post('claims', claim('late-b', { kind: 'IndexPool', name: 'late' }));
    const settled = await claimItem('late-b');
    const { bound: _bound, ...allocating } = settled;
    await stream(streamEvent(modifyRecord({ ...allocating, phase: 'Allocating' }, settled)));
    expect(await claimItem('late-b')).toEqual(settled);
  });
});
