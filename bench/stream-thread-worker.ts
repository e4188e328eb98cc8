/**
 * The stream function on a thread of its own (bench/stream-thread.ts), as a Lambda function has its own
 * CPU: the local stream emulation of `npm start` (lib/local/stream/emulation.ts) fed the store's changes
 * by the main thread, delivering to the stream function with its own counted client (and latency). It
 * answers what it was asked, after everything posted before the question: `drained`, and its `figures`.
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { createStreamHandler } from '../functions/stream.ts';
import { localClient, type ItemChange } from '../lib/local/store/dynalite.ts';
import { LocalStream } from '../lib/local/stream/emulation.ts';
import { Table } from '../lib/store/table.ts';
import { injectLatency, Meter } from './measure.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const { endpoint, tableName, latencyMs, parallelization } = workerData as {
  endpoint: string;
  tableName: string;
  latencyMs: number;
  parallelization: number;
};
const client = injectLatency(localClient(endpoint), latencyMs);
const meter = new Meter().attach(client);
const stream = createStreamHandler({ table: new Table({ tableName, client }) });

/** Records handled, in all and during the load; the time any batch was in flight. */
const figures = { handled: 0, handledDuringLoad: 0, busyMs: 0, busyDuringLoadMs: 0, batchMsDuringLoad: 0 };
let loading = false;
let inFlight = 0;
let busySince = 0;
let loadStartedAt = 0;
const handler = async (event: DynamoDBStreamEvent) => {
  if (inFlight++ === 0) busySince = performance.now();
  const batchStart = performance.now();
  try {
    const response = await stream(event);
    const failed = new Set((response?.batchItemFailures ?? []).map((item) => item.itemIdentifier));
    const first = event.Records.findIndex((record) => failed.has(record.dynamodb!.SequenceNumber!));
    const done = first >= 0 ? first : event.Records.length;
    figures.handled += done;
    if (loading) {
      figures.handledDuringLoad += done;
      figures.batchMsDuringLoad += performance.now() - batchStart;
    }
    return response;
  } finally {
    if (--inFlight === 0) {
      const now = performance.now();
      figures.busyMs += now - busySince;
      if (loading) figures.busyDuringLoadMs += now - Math.max(busySince, loadStartedAt);
    }
  }
};
const local = new LocalStream({ handler, parallelizationFactor: parallelization });

type Message =
  { change: ItemChange } | { ask: 'drained' | 'figures' | 'stop'; id: number } | { load: 'start' | 'end' };

parentPort!.on('message', (message: Message) => {
  if ('change' in message) local.push(message.change);
  else if ('load' in message) {
    const now = performance.now();
    if (message.load === 'start') {
      loading = true;
      loadStartedAt = now;
      figures.handledDuringLoad = figures.busyDuringLoadMs = figures.batchMsDuringLoad = 0;
    } else {
      loading = false;
      // A batch still in flight at the load's end: its time so far counts.
      if (inFlight > 0) figures.busyDuringLoadMs += now - Math.max(busySince, loadStartedAt);
    }
  } else if (message.ask === 'drained')
    void local.drained().then(() => parentPort!.postMessage({ id: message.id }));
  else if (message.ask === 'figures')
    parentPort!.postMessage({
      id: message.id,
      figures: { ...figures, batches: local.delivered, failed: local.failed.length, requests: meter.records },
    });
  else
    void local.stop().then(() => {
      client.destroy();
      parentPort!.postMessage({ id: message.id });
      parentPort!.close();
    });
});
parentPort!.postMessage({ ready: true });
