/** The embedded store on its own thread (same process): dynalite in memory, serving on 127.0.0.1. */
import { parentPort } from 'node:worker_threads';
import { startLocalStore } from '../lib/local/store.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const store = await startLocalStore({ dataDir: ':memory:' });
parentPort!.on('message', (message: unknown) => {
  if (message === 'close') void store.close().then(() => parentPort!.close());
});
parentPort!.postMessage({ endpoint: store.endpoint });
