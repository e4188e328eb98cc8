/**
 * The embedded store for the benchmark: lib/local/store/dynalite.ts's dynalite, in memory, in this process but on
 * its own thread (a worker), so the store and the clients each have a core of the two. With `changes`,
 * the store's committed item changes come back to this thread (the stream benchmark's stream).
 */
import { Worker } from 'node:worker_threads';
import { ensureTable, localClient, type ItemChange } from '../lib/local/store/dynalite.ts';

export interface StoreThread {
  endpoint: string;
  /** Every committed change, in commit order (with `changes` only). */
  onChange(listener: (change: ItemChange) => void): () => void;
  /** Resolves once every change committed before the call has reached the listeners. */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

export async function startStoreThread(options: { changes?: boolean } = {}): Promise<StoreThread> {
  const url = new URL('./store-worker.ts', import.meta.url).href;
  // The worker registers tsx itself: a worker does not inherit the loader the main thread runs under.
  const worker = new Worker(
    `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); });`,
    { eval: true, workerData: { changes: options.changes === true } },
  );
  const listeners = new Set<(change: ItemChange) => void>();
  const pongs: (() => void)[] = [];
  const endpoint = await new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: { endpoint?: string; change?: ItemChange } | 'pong') => {
      if (message === 'pong') pongs.shift()?.();
      else if (message.change) for (const listener of listeners) listener(message.change);
      else if (message.endpoint) resolve(message.endpoint);
    });
  });
  return {
    endpoint,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    // A write's change is posted before its answer is sent, and the worker's messages keep their order.
    caughtUp: () =>
      new Promise<void>((resolve) => {
        pongs.push(resolve);
        worker.postMessage('ping');
      }),
    close: () =>
      new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage('close');
      }),
  };
}

/** Makes a benchmark's table in the store (lib/store/schema.ts's shape); returns its name. */
export async function benchTable(store: StoreThread, tableName: string): Promise<string> {
  const setup = localClient(store.endpoint);
  try {
    await ensureTable(setup, tableName);
  } finally {
    setup.destroy();
  }
  return tableName;
}
