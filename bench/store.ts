/**
 * The embedded store for the benchmark: lib/local/store.ts's dynalite, in memory, in this process but on
 * its own thread (a worker), so the store and the clients each have a core of the two.
 */
import { Worker } from 'node:worker_threads';

export interface StoreThread {
  endpoint: string;
  close(): Promise<void>;
}

export async function startStoreThread(): Promise<StoreThread> {
  const url = new URL('./store-worker.ts', import.meta.url).href;
  // The worker registers tsx itself: a worker does not inherit the loader the main thread runs under.
  const worker = new Worker(
    `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); });`,
    { eval: true },
  );
  const endpoint = await new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (message: { endpoint: string }) => resolve(message.endpoint));
  });
  return {
    endpoint,
    close: () =>
      new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage('close');
      }),
  };
}
