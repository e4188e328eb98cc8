/**
 * Watches on the local server (lib/service/operations/watch.ts): an answer streamed as the changes come,
 * its head sent once the watch is sure to answer 200, and ended when the client goes or the server stops;
 * or, when asked (tests of the deployed behaviour), answered as the deployed API's long polls. And the
 * history's restart: its reader keeps no journal with dynalite (lib/local/stream/durable.ts), so each
 * start with a data folder marks every collection's history as having lost what came before.
 */
import type { ServerResponse } from 'node:http';
import { LONG_POLL_MS, type WatchSink } from '../../functions/http-chain.ts';
import { RESOURCES } from '../domain/kinds.ts';
import { resetHistories } from '../service/history/changes.ts';
import { RepairStore } from '../store/repairs.ts';
import type { Table } from '../store/table.ts';

/**
 * How watches answer: streamed as changes come (the default), or as the deployed API's long polls
 * (`longPoll`: an answer ends after its first events), and for at most `answerMs` (tests: a server that
 * ends every watch early); `onStart` hears each watch asked for, `onAnswer` each answer's lines once it
 * ends (tests: what a client such as kubectl is watching, and when).
 */
export interface WatchMode {
  longPoll?: boolean;
  answerMs?: number;
  onStart?: (url: string) => void;
  onAnswer?: (url: string, lines: string[]) => void;
}

export interface WatchStream {
  sink: WatchSink;
  controller: AbortController;
  /** Whether the answer's head is out (the answer is then this stream's to end). */
  started(): boolean;
  lines: string[];
}

/** The sink a watch streams into, when the request is one (GET with `watch=true`). */
export function watchStream(response: ServerResponse, mode: WatchMode | undefined): WatchStream | undefined {
  const request = response.req;
  if (request.method !== 'GET') return undefined;
  const query = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams;
  if (!['true', '1'].includes(query.get('watch') ?? '')) return undefined;
  const controller = new AbortController();
  response.on('close', () => controller.abort());
  let started = false;
  const lines: string[] = [];
  const open = () => {
    if (started) return;
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
    response.flushHeaders();
    started = true;
  };
  const maxMs = mode?.answerMs ?? (mode?.longPoll ? LONG_POLL_MS : undefined);
  const sink: WatchSink = {
    signal: controller.signal,
    open,
    endAfterEvents: mode?.longPoll ?? false,
    ...(maxMs !== undefined && { maxMs }),
    write(line) {
      open();
      lines.push(line);
      response.write(`${line}\n`);
    },
  };
  return { sink, controller, started: () => started, lines };
}

/** Marks every registered namespace's collections' histories as restarted (service/history/changes.ts). */
export async function restartHistories(table: Table): Promise<void> {
  const registry = new RepairStore(table);
  const names: string[] = [];
  for (let after: string | undefined; ;) {
    const page = await registry.namespaces(100, after);
    names.push(...page.items);
    if (page.last === undefined) break;
    after = page.last;
  }
  await resetHistories(table, names, RESOURCES);
}
