/**
 * The Streams API consumer (lib/local/stream/consumer.ts) against a real DynamoDB Local stream: what it
 * hands the function, and how it plays the event source mapping's batching, retries and checkpoints.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { openStore, type AllotStore } from '../../lib/local/stores.ts';
import { StreamConsumer, type StreamConsumerOptions } from '../../lib/local/stream/consumer.ts';

let store: AllotStore;
let client: DynamoDBClient;
let doc: DynamoDBDocumentClient;
let streams: DynamoDBStreamsClient;
let tables = 0;
const folders: string[] = [];

beforeAll(async () => {
  store = await openStore({ kind: 'dynamodb-local', dataDir: ':memory:' });
  client = store.client();
  doc = DynamoDBDocumentClient.from(client);
  streams = new DynamoDBStreamsClient({
    endpoint: store.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}, 60_000);
afterAll(async () => {
  streams.destroy();
  client.destroy();
  await store.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function newTable(): Promise<{ tableName: string; streamArn: string }> {
  const tableName = `consumer-${process.pid}-${++tables}`;
  await store.prepareTable(tableName);
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  return { tableName, streamArn: Table!.LatestStreamArn! };
}

const put = (tableName: string, item: Record<string, unknown>) =>
  doc.send(new PutCommand({ TableName: tableName, Item: item }));

/** A pool-shaped item: the mapping's filters pass every change of a pool. */
const poolItem = (n: number, extra: Record<string, unknown> = {}) => ({
  pk: `P#${String(n).padStart(4, '0')}`,
  sk: 'pool',
  t: 'pool',
  ...extra,
});

type Handler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

/**
 * One batch of a shard at a time, unless a test asks for more: the batching, retries and bisection below
 * are each lane's, and read plainest on one lane (the lanes have their own test).
 */
function consumer(streamArn: string, handler: Handler, options: Partial<StreamConsumerOptions> = {}) {
  return new StreamConsumer({
    client: streams,
    streamArn,
    handler,
    pollMs: 10,
    parallelizationFactor: 1,
    ...options,
  }).start();
}

const pkOf = (record: DynamoDBRecord) => record.dynamodb!.Keys!.pk!.S!;

describe('the Streams API consumer on DynamoDB Local', () => {
  it('repairs the empty maps DynamoDB Local writes without their M tag, so unmarshall reads the record', async () => {
    const { tableName, streamArn } = await newTable();
    await put(
      tableName,
      poolItem(1, { labels: {}, spec: { ranges: [], nested: { inner: {} } }, lists: [{}, []] }),
    );
    const images: Record<string, unknown>[] = [];
    const raw: unknown[] = [];
    const feed = consumer(streamArn, async (event) => {
      for (const record of event.Records) {
        raw.push(record.dynamodb!.NewImage!.labels);
        images.push(unmarshall(record.dynamodb!.NewImage as Record<string, AttributeValue>));
      }
    });
    await feed.drained();
    await feed.stop();
    expect(raw).toEqual([{ M: {} }]);
    expect(images).toEqual([
      {
        pk: 'P#0001',
        sk: 'pool',
        t: 'pool',
        labels: {},
        spec: { ranges: [], nested: { inner: {} } },
        lists: [{}, []],
      },
    ]);
  });

  it('hands the function only what the mapping filters pass, in commit order, at most 100 records a batch', async () => {
    const { tableName, streamArn } = await newTable();
    for (let n = 0; n < 230; n++) await put(tableName, poolItem(n));
    await put(tableName, { pk: 'X#1', sk: 'other', t: 'summary' }); // no filter pattern passes it
    const batches: string[][] = [];
    const feed = consumer(streamArn, async (event) => {
      batches.push(event.Records.map(pkOf));
      expect(event.Records.every((record) => record.eventSourceARN === streamArn)).toBe(true);
      expect(typeof event.Records[0]!.dynamodb!.ApproximateCreationDateTime).toBe('number');
    });
    await feed.drained();
    await feed.stop();
    expect(Math.max(...batches.map((batch) => batch.length))).toBeLessThanOrEqual(100);
    expect(batches.flat()).toEqual(Array.from({ length: 230 }, (_, n) => poolItem(n).pk));
  });

  it('retries a batch from its first reported failure, never the records before it', async () => {
    const { tableName, streamArn } = await newTable();
    for (let n = 0; n < 10; n++) await put(tableName, poolItem(n));
    const seen: string[] = [];
    let failedOnce = false;
    const feed = consumer(streamArn, async (event) => {
      seen.push(...event.Records.map(pkOf));
      const fifth = event.Records.find((record) => pkOf(record) === poolItem(5).pk);
      if (!fifth || failedOnce) return { batchItemFailures: [] };
      failedOnce = true;
      return { batchItemFailures: [{ itemIdentifier: fifth.dynamodb!.SequenceNumber! }] };
    });
    await feed.drained();
    await feed.stop();
    const all = Array.from({ length: 10 }, (_, n) => poolItem(n).pk);
    expect(seen).toEqual([...all, ...all.slice(5)]);
    expect(feed.failed).toEqual([]);
  });

  it('bisects a batch whose function throws until the poisoned record is alone, then gives it up to the on-failure list', async () => {
    const { tableName, streamArn } = await newTable();
    for (let n = 0; n < 8; n++) await put(tableName, poolItem(n));
    const poison = poolItem(5).pk;
    const folder = mkdtempSync(join(tmpdir(), 'allot-on-failure-'));
    folders.push(folder);
    const onFailureFile = join(folder, 'on-failure.jsonl');
    const sizes: number[] = [];
    const done: string[] = [];
    const feed = consumer(
      streamArn,
      async (event) => {
        sizes.push(event.Records.length);
        if (event.Records.some((record) => pkOf(record) === poison)) throw new Error('poisoned');
        done.push(...event.Records.map(pkOf));
      },
      { maxRetries: 2, onFailureFile },
    );
    await feed.drained();
    await feed.stop();
    expect(done).toEqual(Array.from({ length: 8 }, (_, n) => poolItem(n).pk).filter((pk) => pk !== poison));
    expect(feed.failed.map(pkOf)).toEqual([poison]);
    const given = readFileSync(onFailureFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { reason: string; record: DynamoDBRecord });
    expect(given.map(({ reason, record }) => [reason, pkOf(record)])).toEqual([['Error: poisoned', poison]]);
    // 8 throws → 4 pass (0–3) → 4 throws → 2 throws → 4 alone passes → 5–7 throw → 2 throws → 5 alone
    // fails three times (a try and 2 retries) and is given up → 6–7 pass.
    expect(sizes).toEqual([8, 4, 4, 2, 1, 3, 2, 1, 1, 1, 2]);
  });

  it('spreads a shard over concurrent batches by item: each item in commit order, a stuck item holding up only its lane', async () => {
    const { tableName, streamArn } = await newTable();
    const items = 12;
    for (let round = 0; round < 4; round++)
      for (let n = 0; n < items; n++) await put(tableName, poolItem(n, { round }));
    const seen = new Map<string, number[]>();
    let inFlight = 0;
    let most = 0;
    let stuck = true;
    const slow = poolItem(0).pk;
    const feed = consumer(
      streamArn,
      async (event) => {
        most = Math.max(most, ++inFlight);
        // The first batch holding item 0 waits until others have gone by: it holds up only its own lane.
        if (stuck && event.Records.some((record) => pkOf(record) === slow)) {
          stuck = false;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        for (const record of event.Records) {
          const round = Number(record.dynamodb!.NewImage!.round!.N);
          seen.set(pkOf(record), [...(seen.get(pkOf(record)) ?? []), round]);
        }
        inFlight--;
      },
      { parallelizationFactor: 4 },
    );
    await feed.drained();
    await feed.stop();
    expect(most).toBeGreaterThan(1);
    for (let n = 0; n < items; n++) expect(seen.get(poolItem(n).pk)).toEqual([0, 1, 2, 3]);
  });

  it('resumes after its checkpoint: a new consumer on the same file sees only what came later', async () => {
    const { tableName, streamArn } = await newTable();
    const folder = mkdtempSync(join(tmpdir(), 'allot-checkpoint-'));
    folders.push(folder);
    const checkpointFile = join(folder, 'checkpoints.json');
    for (let n = 0; n < 5; n++) await put(tableName, poolItem(n));
    const first: string[] = [];
    const one = consumer(streamArn, async (event) => void first.push(...event.Records.map(pkOf)), {
      checkpointFile,
    });
    await one.drained();
    await one.stop();
    const stored = JSON.parse(readFileSync(checkpointFile, 'utf8'));
    expect(stored.streamArn).toBe(streamArn);
    for (let n = 5; n < 8; n++) await put(tableName, poolItem(n));
    const second: string[] = [];
    const two = consumer(streamArn, async (event) => void second.push(...event.Records.map(pkOf)), {
      checkpointFile,
    });
    await two.drained();
    await two.stop();
    expect(first).toEqual([0, 1, 2, 3, 4].map((n) => poolItem(n).pk));
    expect(second).toEqual([5, 6, 7].map((n) => poolItem(n).pk));
  });
});
