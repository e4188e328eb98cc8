/**
 * Events out, end to end on the local Allot: claims and releases by direct invocation and as EventBridge
 * requests, the stream emulation deriving and publishing events, every event checked against its schema,
 * and the same stream records replayed to show they give the same ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoDBRecord } from 'aws-lambda';
import { client, indexPool, API_VERSION, startTestAllot } from '../helpers/allot.ts';
import { busEvent } from '../helpers/events.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { LocalStream } from '../../lib/local/stream/emulation.ts';
import { MemoryEventSink, type DeliveredEvent } from '../../lib/local/events.ts';
import { publishStreamEvents } from '../../functions/stream-events.ts';
import { createStreamHandler } from '../../functions/stream.ts';
import { fakeContext } from '../../lib/local/server.ts';
import { expectValid } from './schemas.ts';

let allot: LocalAllot;
let api: ReturnType<typeof client>;
const records: DynamoDBRecord[] = [];
let capture: LocalStream;

const poolRef = (name: string) => ({ kind: 'IndexPool', name, apiVersion: API_VERSION });
const claimRequest = (name: string, pool: string) => ({
  operation: 'claim',
  namespace: 'default',
  name,
  spec: { poolRef: poolRef(pool) },
});
function published(): DeliveredEvent[] {
  return (allot.events as MemoryEventSink).events;
}

function ofType(detailType: string) {
  return published().filter((event) => event['detail-type'] === detailType);
}

async function settled(): Promise<void> {
  await allot.stream!.drained();
  await capture.drained();
}

beforeAll(async () => {
  allot = await startTestAllot();
  api = client(allot.url);
  // A second emulated stream with the same filter, that only keeps what it is given: the records to replay.
  capture = new LocalStream({
    handler: async (event) => {
      records.push(...event.Records);
    },
  });
  (await allot.store.changes(allot.table.tableName)).onChange((change) => capture.push(change));

  expect((await api.post('indexpools', indexPool('vlans', ['100..101']))).status).toBe(201);
  expect((await api.post('indexpools', indexPool('kept', ['7'], { reclaimPolicy: 'Retain' }))).status).toBe(
    201,
  );
  await settled();

  const first = (await allot.invoke('claim', claimRequest('a', 'vlans'))) as any;
  expect(first.status.value).toBe('100');
  const second = (await allot.invoke(
    'claim',
    busEvent('Allot Claim Requested', {
      namespace: 'default',
      name: 'b',
      spec: { poolRef: poolRef('vlans') },
    }),
  )) as any;
  expect(second.status.value).toBe('101');
  await settled();
  const third = (await allot.invoke('claim', claimRequest('c', 'vlans'))) as any;
  expect(third.status.conditions[0].reason).toBe('PoolExhausted');
  await settled();
  const released = (await allot.invoke(
    'release',
    busEvent('Allot Release Requested', { namespace: 'default', name: 'a' }),
  )) as any;
  expect(released.status.value).toBe('100');
  await settled();

  expect(((await allot.invoke('claim', claimRequest('r', 'kept'))) as any).status.value).toBe('7');
  await settled();
  expect(
    ((await allot.invoke('release', { operation: 'release', namespace: 'default', name: 'r' })) as any).kind,
  ).toBe('Claim');
  expect(
    ((await allot.invoke('claim', claimRequest('orphan', 'missing'))) as any).status.conditions[0].reason,
  ).toBe('PoolNotFound');
  await settled();
});

afterAll(async () => {
  await capture?.stop();
  await allot?.close();
});

describe('events published by the stream function', () => {
  it('match their JSON Schemas', () => {
    expect(published().length).toBeGreaterThan(0);
    for (const event of published()) {
      expect(event.source).toBe('allot');
      expectValid(event['detail-type'], event.detail);
    }
  });

  it('have no two events with one id', () => {
    const ids = published().map((event) => event.detail.eventId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('say each claim got its value, the waiting one once its value was freed', () => {
    const allocated = ofType('Claim Allocated').map((event: any) => [
      event.detail.claim.name,
      event.detail.value,
    ]);
    expect(allocated).toEqual(
      expect.arrayContaining([
        ['a', '100'],
        ['b', '101'],
        ['c', '100'],
        ['r', '7'],
      ]),
    );
    expect(allocated).toHaveLength(4);
  });

  it('say a claim waits, with the reason', () => {
    const pending = ofType('Claim Pending').map((event: any) => [
      event.detail.claim.name,
      event.detail.reason,
    ]);
    expect(pending).toEqual([
      ['c', 'PoolExhausted'],
      ['orphan', 'PoolNotFound'],
    ]);
  });

  it('say a claim was released, with the value it held', () => {
    const releases = ofType('Claim Released').map((event: any) => [
      event.detail.claim.name,
      event.detail.value,
    ]);
    expect(releases).toEqual([
      ['a', '100'],
      ['r', '7'],
    ]);
  });

  it('say how each released value went back: Recycle deleted, Retain kept', () => {
    const reclaimed = ofType('Allocation Reclaimed').map((event: any) => [
      event.detail.claim.name,
      event.detail.value,
      event.detail.reclaimPolicy,
    ]);
    expect(reclaimed).toEqual([
      ['a', '100', 'Recycle'],
      ['r', '7', 'Retain'],
    ]);
  });

  it('say when a pool ran out and when it had room again', () => {
    const capacity = published()
      .filter((event) => event['detail-type'].startsWith('Pool '))
      .map((event: any) => [event['detail-type'], event.detail.pool.name, event.detail.free]);
    expect(capacity).toContainEqual(['Pool Exhausted', 'kept', '0']);
    const vlans = capacity.filter(([, pool]) => pool === 'vlans').map(([type]) => type);
    // Exhausted by b, available when a's value was recycled, exhausted again when c took it.
    expect(vlans).toEqual(['Pool Exhausted', 'Pool Available', 'Pool Exhausted']);
  });
});

describe('stream replay', () => {
  it('gives the same events with the same ids, so consumers can drop the duplicates', async () => {
    expect(records.length).toBeGreaterThan(0);
    const again = new MemoryEventSink();
    await publishStreamEvents({ Records: records }, again);
    await publishStreamEvents({ Records: [...records].reverse() }, again);
    const ids = new Set(published().map((event) => event.detail.eventId));
    const replayed = again.events.map((event) => event.detail.eventId);
    expect(new Set(replayed)).toEqual(ids);
    expect(replayed).toHaveLength(2 * ids.size);
  });
});

describe('a batch whose events cannot be published', () => {
  it('fails as a whole, so the event source mapping retries it (and the events keep their ids)', async () => {
    const unpublishable = {
      publish: async () => {
        throw new Error('PutEvents: 1 entries still failed after 4 attempts (InternalFailure)');
      },
    };
    const handler = createStreamHandler({ table: allot.table }, { events: unpublishable });
    const released = records.filter(
      (record) => record.eventName === 'REMOVE' && record.dynamodb?.OldImage?.t?.S === 'claim',
    );
    expect(released.length).toBeGreaterThan(0);
    await expect(handler({ Records: released }, fakeContext('allot-stream'))).rejects.toThrow(/PutEvents/);
  });
});
