/**
 * The stream function on its own thread (bench/stream-thread-worker.ts), for the sustained-load bench:
 * on the main thread it shared one event loop with the sixteen clients' request handlers, which kept
 * that loop busy 97 % of the load, so its rate measured the handlers' CPU as much as its own. In AWS the
 * stream function is a Lambda function of its own. The main thread forwards the store's changes to it.
 */
import { Worker } from 'node:worker_threads';
import type { ItemChange } from '../lib/local/store/dynalite.ts';
import type { RequestRecord } from './measure.ts';
import type { BusyFigures } from './stream-busy.ts';

export interface StreamFigures extends BusyFigures {
  batches: number;
  failed: number;
  requests: RequestRecord[];
}

export interface StreamThread {
  push(change: ItemChange): void;
  load(phase: 'start' | 'end'): void;
  drained(): Promise<void>;
  figures(): Promise<StreamFigures>;
  stop(): Promise<void>;
}

export async function startStreamThread(options: {
  endpoint: string;
  tableName: string;
  latencyMs: number;
  parallelization: number;
}): Promise<StreamThread> {
  const url = new URL('./stream-thread-worker.ts', import.meta.url).href;
  const worker = new Worker(
    `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); });`,
    { eval: true, workerData: options },
  );
  const waiting = new Map<number, (answer: { figures?: StreamFigures }) => void>();
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: { ready?: true; id?: number; figures?: StreamFigures }) => {
      if (message.ready) resolve();
      else if (message.id !== undefined) {
        waiting.get(message.id)?.(message);
        waiting.delete(message.id);
      }
    });
  });
  const ask = (what: 'drained' | 'figures' | 'stop') =>
    new Promise<{ figures?: StreamFigures }>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      worker.postMessage({ ask: what, id });
    });
  return {
    push: (change) => worker.postMessage({ change }),
    load: (phase) => worker.postMessage({ load: phase }),
    drained: async () => void (await ask('drained')),
    figures: async () => (await ask('figures')).figures!,
    stop: async () => {
      await ask('stop');
      await worker.terminate();
    },
  };
}
