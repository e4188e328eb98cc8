/**
 * The embedded store on its own thread (same process): dynalite in memory, serving on 127.0.0.1. Asked to
 * (`workerData.changes`), it posts every committed item change to the main thread, in commit order, for
 * the stream benchmark's emulated stream (bench/stream-feed.ts); a `ping` is answered `pong` after every
 * change posted before it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startLocalStore } from '../lib/local/store/dynalite.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const store = await startLocalStore({ dataDir: ':memory:' });
if ((workerData as { changes?: boolean } | undefined)?.changes)
  store.onChange((change) => parentPort!.postMessage({ change }));
parentPort!.on('message', (message: unknown) => {
  if (message === 'close') void store.close().then(() => parentPort!.close());
  else if (message === 'ping') parentPort!.postMessage('pong');
});
parentPort!.postMessage({ endpoint: store.endpoint });
