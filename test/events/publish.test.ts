/**
 * The publishing side: the EventBridge sink (the real SDK, with EventBridge's answers played by its HTTP
 * handler: there is no local EventBridge), the local file sink, and the SDK middleware that counts
 * conditional-check failures (on dynalite).
 */
import { Readable } from 'node:stream';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveEvents, type AllotEvent, type StreamChange } from '../../lib/domain/events.ts';
import { EventBridgeSink } from '../../functions/event-bus.ts';
import { countConditionalCheckFailures } from '../../functions/sdk-metrics.ts';
import { FileEventSink } from '../../lib/local/events.ts';
import {
  ensureTable,
  localClient,
  startLocalStore,
  type LocalStore,
} from '../../lib/local/store/dynalite.ts';

type Entry = { Source: string; DetailType: string; Detail: string; EventBusName: string; Time?: number };

/** An EventBridge client whose HTTP handler answers PutEvents; `failing` says which entries fail, per call. */
function fakeBus(
  failing: (entries: Entry[], call: number) => boolean[] = (entries) => entries.map(() => false),
) {
  const calls: Entry[][] = [];
  const client = new EventBridgeClient({
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    requestHandler: {
      async handle(request: { body: Uint8Array | string }) {
        const entries = JSON.parse(
          typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body),
        ).Entries as Entry[];
        calls.push(entries);
        const failed = failing(entries, calls.length);
        const body = {
          FailedEntryCount: failed.filter(Boolean).length,
          Entries: failed.map((fails, index) =>
            fails
              ? { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' }
              : { EventId: `e-${calls.length}-${index}` },
          ),
        };
        return {
          response: {
            statusCode: 200,
            headers: { 'content-type': 'application/x-amz-json-1.1' },
            body: Readable.from([Buffer.from(JSON.stringify(body))]),
          },
        };
      },
    } as never,
  });
  return { client, calls };
}

const T0 = '2026-11-29T12:00:00Z';
function releases(count: number): AllotEvent[] {
  const changes: StreamChange[] = Array.from({ length: count }, (_, i) => ({
    eventName: 'REMOVE',
    recordedAt: T0,
    oldImage: {
      t: 'claim',
      metadata: { name: `c${i}`, namespace: 'default', uid: `u${i}` },
      spec: { poolRef: { kind: 'IndexPool', name: 'p' } },
      status: { conditions: [] },
      phase: 'Waiting',
      rv: 1,
    },
  }));
  return deriveEvents(changes);
}

const noWait = async () => undefined;

describe('EventBridgeSink', () => {
  it('puts events in batches of at most ten, on the bus, with source, detail type and detail', async () => {
    const bus = fakeBus();
    await new EventBridgeSink({ busName: 'allot-bus', client: bus.client, sleep: noWait }).publish(
      releases(23),
    );
    expect(bus.calls.map((entries) => entries.length)).toEqual([10, 10, 3]);
    const first = bus.calls[0]![0]!;
    expect(first).toMatchObject({ EventBusName: 'allot-bus', Source: 'allot', DetailType: 'Claim Released' });
    expect(JSON.parse(first.Detail)).toMatchObject({ claim: { name: 'c0', uid: 'u0' } });
  });

  it('retries only the entries EventBridge reports failed', async () => {
    const bus = fakeBus((entries, call) => entries.map((_, index) => call === 1 && index % 2 === 0));
    await new EventBridgeSink({ busName: 'b', client: bus.client, sleep: noWait }).publish(releases(5));
    expect(bus.calls).toHaveLength(2);
    const sent = (call: number) => bus.calls[call]!.map((entry) => JSON.parse(entry.Detail).claim.name);
    expect(sent(1)).toEqual(['c0', 'c2', 'c4']);
  });

  it('throws when entries still fail after its attempts, so the stream batch is retried', async () => {
    const bus = fakeBus((entries) => entries.map(() => true));
    const sink = new EventBridgeSink({ busName: 'b', client: bus.client, sleep: noWait });
    await expect(sink.publish(releases(2))).rejects.toThrow(
      /2 entries still failed after 4 attempts \(InternalFailure\)/,
    );
    expect(bus.calls).toHaveLength(4);
  });

  it('sends nothing for no events', async () => {
    const bus = fakeBus();
    await new EventBridgeSink({ busName: 'b', client: bus.client }).publish([]);
    expect(bus.calls).toEqual([]);
  });
});

describe('FileEventSink', () => {
  const folder = mkdtempSync(join(tmpdir(), 'allot-events-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('appends one EventBridge-shaped JSON object per line, creating the folder', async () => {
    const sink = new FileEventSink(join(folder, 'data', 'events.jsonl'));
    await sink.publish(releases(2));
    await sink.publish(releases(1));
    const lines = readFileSync(join(folder, 'data', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      source: 'allot',
      'detail-type': 'Claim Released',
      time: T0,
      detail: { claim: { name: 'c0' } },
    });
  });
});

describe('countConditionalCheckFailures', () => {
  let store: LocalStore;
  beforeAll(async () => {
    store = await startLocalStore({ dataDir: ':memory:' });
  });
  afterAll(async () => {
    await store?.close();
  });

  it('counts each ConditionalCheckFailedException and nothing else, and lets the error through', async () => {
    const client = localClient(store.endpoint);
    await ensureTable(client, 'ccf');
    const counter = countConditionalCheckFailures(client);
    const put = () =>
      client.send(
        new PutItemCommand({
          TableName: 'ccf',
          Item: { pk: { S: 'a' }, sk: { S: 'b' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    await put();
    await expect(put()).rejects.toThrow(expect.objectContaining({ name: 'ConditionalCheckFailedException' }));
    await expect(put()).rejects.toThrow();
    await expect(
      client.send(new PutItemCommand({ TableName: 'missing', Item: { pk: { S: 'a' } } })),
    ).rejects.toThrow();
    expect(counter.take()).toBe(2);
    expect(counter.take()).toBe(0);
    client.destroy();
  });
});
