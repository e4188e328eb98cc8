/**
 * The stream function on a thread of its own (bench/stream-thread.ts), as a Lambda function has its own
 * CPU: the local stream emulation of `npm start` (lib/local/stream/emulation.ts) fed the store's changes
 * by the main thread, delivering to the stream function with its own counted client (and latency). It
 * answers what it was asked, after everything posted before the question: `drained`, and its `figures`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createStreamHandler } from '../functions/stream.ts';
import { localClient, type ItemChange } from '../lib/local/store/dynalite.ts';
import { LocalStream } from '../lib/local/stream/emulation.ts';
import { Table } from '../lib/store/table.ts';
import { injectLatency, Meter } from './measure.ts';
import { busyMeter } from './stream-busy.ts';

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

const { handler, figures, load } = busyMeter(stream);
const local = new LocalStream({ handler, parallelizationFactor: parallelization });

type Message =
  { change: ItemChange } | { ask: 'drained' | 'figures' | 'stop'; id: number } | { load: 'start' | 'end' };

parentPort!.on('message', (message: Message) => {
  if ('change' in message) local.push(message.change);
  else if ('load' in message) load(message.load);
  else if (message.ask === 'drained')
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
