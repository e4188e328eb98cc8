/**
 * The local Allot: the store lib/local/stores.ts chooses (dynalite in-process unless ALLOT_STORE says
 * otherwise) with its stream feeding the real stream handler, and a
 * node:http server that turns requests into API Gateway (HTTP API, payload 2.0) events for the real HTTP
 * handler, which dispatches from the same route table as the deployed API.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createHttpHandler, MAX_BODY_BYTES } from '../../functions/http.ts';
import { createStreamHandler } from '../../functions/stream.ts';
import { createHistoryHandler } from '../../functions/history.ts';
import { STREAM_WATCH_MS, type WatchSink } from '../../functions/http-chain.ts';
import { HISTORY_FILTER_PATTERNS } from '../cloud/stream-filter.ts';
import { restartHistories, watchStream, type WatchMode, type WatchStream } from './watches.ts';
import { createClaimHandler } from '../../functions/claim.ts';
import { createReleaseHandler } from '../../functions/release.ts';
import { createClaimResourceHandler } from '../../functions/claim-resource.ts';
import type { DirectFunctionName } from '../cloud/requests.ts';
import { createAwsApis, type AwsApis } from './aws-apis.ts';
import type { EventSink } from '../domain/events.ts';
import { FileEventSink, MemoryEventSink } from './events.ts';
import { Table } from '../store/table.ts';
import { openStore, type AllotStore, type StoreKind, type StreamFeed } from './stores.ts';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { serveConsole } from '../console/serve.ts';
import { LOCAL_REPAIR_INTERVAL_MS, startRepairLoop, type RepairLoop } from './repairs.ts';
import { LocalTtl } from './store/ttl.ts';
import { DataLock } from './data-lock.ts';
import { listen, type Listener } from './listener.ts';

/**
 * How long a stop may take, from its start to the process's exit (the contract promises 3 s; the rest is
 * the margin for the exit itself).
 */
export const STOP_BUDGET_MS = 2000;

export interface LocalAllotOptions {
  /** A folder for the data, or `:memory:`. */
  dataDir: string;
  /** The HTTP port; 0 picks a free one. */
  port: number;
  tableName?: string;
  /** Which DynamoDB (lib/local/stores.ts); default `ALLOT_STORE`, else dynalite. */
  store?: StoreKind;
  /** Set false to run without the stream emulation (tests that feed the stream function by hand). */
  stream?: boolean;
  /**
   * How often the repair sweep runs (lib/local/repairs.ts), also once at start; 0 turns it off. Default:
   * ALLOT_REPAIR_INTERVAL_MS, or 20 s with a data folder and off for `:memory:` (nothing survives there).
   */
  repairIntervalMs?: number;
  /**
   * How often the TTL emulation looks for items past their time (lib/local/store/ttl.ts); 0: only when asked
   * (`ttl.expireDue()`). Runs with the stream: without one nothing would see its deletes.
   */
  ttlIntervalMs?: number;
  /** The HTTP handler's own DynamoDB client, made for the store's endpoint (tests give it faults). */
  apiClient?: (endpoint: string) => DynamoDBClient;
  /**
   * The data folder's lock, when the caller took it already (bin/server.ts does, before it loads the rest);
   * otherwise it is taken here. Either way the server gives it up when it stops, or fails to start.
   */
  lock?: DataLock;
  /** How watches answer (lib/local/watches.ts): streamed, unless a test asks for long polls. */
  watch?: WatchMode;
}

/** How a stop went: how long it took, and what it gave up on (left, as a crash leaves it, for the next start). */
export interface StopReport {
  ms: number;
  abandoned: string[];
}

/** The functions a direct invocation can reach (Lambda Invoke, or an EventBridge rule's target). */
export type InvocableFunction = DirectFunctionName;

export interface LocalAllot {
  url: string;
  table: Table;
  store: AllotStore;
  stream?: StreamFeed;
  /** What feeds the history function (the stream's second reader, for watches). */
  history?: StreamFeed;
  /** The repair sweep's local schedule, when it runs. */
  repairs?: RepairLoop;
  /** DynamoDB's TTL, emulated (lib/local/store/ttl.ts), while the stream runs. */
  ttl?: LocalTtl;
  /**
   * Where the stream function's events go: `<dataDir>/events.jsonl`, or memory (`events.events`) for
   * `:memory:`.
   */
  events: EventSink;
  /**
   * Invokes the claim, release or claim-resource function with a payload, an EventBridge event or a
   * CloudFormation request, as Lambda would (lib/local/aws-apis.ts serves the same over Lambda's API).
   */
  invoke(functionName: InvocableFunction, event: unknown): Promise<unknown>;
  /**
   * Stops (see `stopLocalAllot`) by `by` (epoch ms; default STOP_BUDGET_MS from now), whatever it was
   * doing: what it had not applied stays in the journal (or the stream) for the next start.
   */
  close(options?: { by?: number }): Promise<StopReport>;
  /** Stops at once, synchronously, as a crash would (a second Ctrl-C): the store's child is killed. */
  abort(): void;
}

/** A Lambda context for a local invocation; `remainingMs`: how long it may run (a watch: its whole answer). */
export function fakeContext(functionName: string, remainingMs = 10_000): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: crypto.randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Reads a body, keeping at most one byte past the limit (enough for the handler to answer 413). */
async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    if (size <= MAX_BODY_BYTES) chunks.push(buffer);
    size += buffer.length;
  }
  return Buffer.concat(chunks)
    .subarray(0, MAX_BODY_BYTES + 1)
    .toString('utf8');
}

export function toEvent(request: IncomingMessage, body: string): APIGatewayProxyEventV2 {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const method = request.method ?? 'GET';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: '127.0.0.1',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: crypto.randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
    body: body.length > 0 ? body : undefined,
    isBase64Encoded: false,
  };
}

export async function startLocalAllot(options: LocalAllotOptions): Promise<LocalAllot> {
  // The folder first: a second server on it must not touch its stores (dynalite's LevelDB, the journal).
  const lock =
    options.lock ?? (options.dataDir === ':memory:' ? undefined : await DataLock.acquire(options.dataDir));
  let listener: Listener | undefined;
  let store: AllotStore | undefined;
  try {
    listener = await listen(options.port);
    lock?.update({ port: listener.port, url: `http://127.0.0.1:${listener.port}` });
    store = await openStore({ kind: options.store, dataDir: options.dataDir });
    const allot = await serve(options, listener, store, lock);
    lock?.update({ state: 'running' });
    return allot;
  } catch (error) {
    await listener?.stop(Date.now());
    await store?.close().catch(() => undefined);
    lock?.release();
    throw error;
  }
}

async function serve(
  options: LocalAllotOptions,
  listener: Listener,
  store: AllotStore,
  lock: DataLock | undefined,
): Promise<LocalAllot> {
  const client = store.client();
  const tableName = options.tableName ?? store.defaultTableName;
  await store.prepareTable(tableName);
  const table = new Table({ tableName, client });
  const events =
    options.dataDir === ':memory:'
      ? new MemoryEventSink()
      : new FileEventSink(join(options.dataDir, 'events.jsonl'));
  // The history function's own client, as deployed (a function of its own): its writes, which follow
  // every change a moment later, are not the stream's or the API's (tests count those by their client).
  const historyClient = options.stream !== false ? store.client() : undefined;
  const historyTable = historyClient && new Table({ tableName, client: historyClient });
  // The history's reader keeps no journal with dynalite: positions from before this start are gone. Marked
  // before the stream function replays its journal, so the reader hears every write that replay makes;
  // and the repair sweep knows that a record from before now that it has not read, it never will.
  const historySince =
    historyTable && store.kind === 'dynalite' && options.dataDir !== ':memory:' ? Date.now() : undefined;
  if (historySince !== undefined) await restartHistories(historyTable!);
  const stream =
    options.stream !== false ? await startStreamFunction(store, tableName, table, events) : undefined;
  const history = historyTable ? await startHistoryFunction(store, tableName, historyTable) : undefined;
  const apiClient = options.apiClient?.(store.endpoint);
  const httpHandler = createHttpHandler({
    table: apiClient ? new Table({ tableName, client: apiClient }) : table,
  });
  const invoke = directInvoker(table);
  // Lambda's Invoke and EventBridge's PutEvents, on this port (lib/local/aws-apis.ts).
  const awsApis = createAwsApis(invoke);
  const watches = serveRequests(options, listener, httpHandler, awsApis);
  const repairIntervalMs = repairIntervalOf(options);
  const repairs =
    stream && repairIntervalMs > 0
      ? startRepairLoop({ table }, repairIntervalMs, undefined, { historySince })
      : undefined;
  // Its own client, as TTL is no caller of ours (tests count requests by client).
  const ttlClient = stream ? store.client() : undefined;
  const ttl = ttlClient
    ? new LocalTtl({ client: ttlClient, tableName, intervalMs: options.ttlIntervalMs }).start()
    : undefined;
  let stopped: Promise<StopReport> | undefined;
  const allot: LocalAllot = {
    url: `http://127.0.0.1:${listener.port}`,
    table,
    store,
    stream,
    history,
    repairs,
    ttl,
    events,
    invoke,
    close(closeOptions = {}) {
      const by = closeOptions.by ?? Date.now() + STOP_BUDGET_MS;
      for (const watch of watches) watch.controller.abort();
      stopped ??= stopLocalAllot(
        {
          listener,
          repairs,
          ttl,
          stream,
          history,
          store,
          lock,
          clients: [
            client,
            ...(historyClient ? [historyClient] : []),
            ...(apiClient ? [apiClient] : []),
            ...(ttlClient ? [ttlClient] : []),
          ],
          // Asynchronous invocations under way (Lambda's Event, EventBridge's targets), within the stop's budget.
          invocations: (until) => awsApis.settle(Math.max(0, until - Date.now())),
        },
        by,
      );
      return stopped;
    },
    abort() {
      store.abort();
      lock?.release();
    },
  };
  return allot;
}

/** The stream function, fed by the store's stream. */
async function startStreamFunction(
  store: AllotStore,
  tableName: string,
  table: Table,
  events: EventSink,
): Promise<StreamFeed | undefined> {
  const streamHandler = createStreamHandler({ table }, { events });
  return store.startStream(tableName, {
    handler: (event) => streamHandler(event, fakeContext('allot-stream')),
    onFailure: (record, error) =>
      console.error(`stream record ${record.dynamodb?.SequenceNumber} failed after retries`, error ?? ''),
  });
}

/** The history function, the stream's second reader (for watches), on its own client. */
async function startHistoryFunction(
  store: AllotStore,
  tableName: string,
  historyTable: Table,
): Promise<StreamFeed | undefined> {
  const historyHandler = createHistoryHandler({ table: historyTable }, { prune: true });
  return store.startStream(tableName, {
    handler: (event) => historyHandler(event, fakeContext('allot-history')),
    reader: { name: 'history', filters: HISTORY_FILTER_PATTERNS },
    onFailure: (record, error) =>
      console.error(`history record ${record.dynamodb?.SequenceNumber} failed`, error ?? ''),
  });
}

/** Invokes the functions a direct invocation can reach, as Lambda would. */
function directInvoker(table: Table): LocalAllot['invoke'] {
  const invocable = {
    claim: createClaimHandler({ table }),
    release: createReleaseHandler({ table }),
    'claim-resource': createClaimResourceHandler({ table }),
  };
  return (name, event) => invocable[name](event as never, fakeContext(`allot-${name}`)) as Promise<unknown>;
}

/**
 * Answers the listener's requests: the AWS APIs, the console, else the HTTP handler. Returns the watches
 * streaming now: a stop ends them first (each then ends its answer).
 */
function serveRequests(
  options: LocalAllotOptions,
  listener: Listener,
  httpHandler: ReturnType<typeof createHttpHandler>,
  awsApis: AwsApis,
): ReadonlySet<WatchStream> {
  const watches = new Set<WatchStream>();
  // A streamed watch lasts as long as its answer; middy would cut it at the context's time.
  const contextFor = (watch: WatchStream | undefined) =>
    fakeContext('allot-api', watch ? STREAM_WATCH_MS + 60_000 : undefined);
  listener.serve((request, response) => {
    if (awsApis.handles(request)) return void awsApis.serve(request, response);
    // `GET /` is the console (lib/console), a client of the API below like any other.
    if (serveConsole(request, response)) return;
    const watch = watchStream(response, options.watch);
    if (watch) {
      watches.add(watch);
      options.watch?.onStart?.(request.url ?? '');
    }
    void answer(request, response, (event) => httpHandler(event, contextFor(watch)), watch).finally(() => {
      if (!watch) return;
      watches.delete(watch);
      options.watch?.onAnswer?.(request.url ?? '', watch.lines);
    });
  });
  return watches;
}

/** The repair sweep's interval: the option, else ALLOT_REPAIR_INTERVAL_MS, else off for `:memory:`. */
function repairIntervalOf(options: LocalAllotOptions): number {
  return (
    options.repairIntervalMs ??
    (process.env.ALLOT_REPAIR_INTERVAL_MS !== undefined
      ? Number(process.env.ALLOT_REPAIR_INTERVAL_MS)
      : options.dataDir === ':memory:'
        ? 0
        : LOCAL_REPAIR_INTERVAL_MS)
  );
}

/** Runs one request through the HTTP handler and writes its answer (a 500 in the contract's shape if it throws). */
async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  handle: (event: APIGatewayProxyEventV2) => Promise<unknown>,
  watch?: WatchStream,
): Promise<void> {
  let result: APIGatewayProxyStructuredResultV2;
  try {
    const event = toEvent(request, await readBody(request));
    if (watch) (event as { watchSink?: WatchSink }).watchSink = watch.sink;
    result = (await handle(event)) as APIGatewayProxyStructuredResultV2;
  } catch {
    result = {
      statusCode: 500,
      body: JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 500,
        reason: 'InternalError',
        message: 'internal error',
      }),
    };
  }
  if (response.destroyed) return; // the server stopped while this ran; its connection is gone
  if (watch?.started()) {
    response.end(); // a watch that streamed its lines: its head is out
    return;
  }
  response.writeHead(result.statusCode ?? 200, {
    'content-type': 'application/json',
    ...(result.headers as Record<string, string>),
  });
  response.end(result.body ?? '');
}

/**
 * A stop, in the order that lets each part finish what it can within `by` and abandons the rest as a
 * crash would (everything here is built to survive one: the journal and the stream keep what the stream
 * function has not applied; the repair sweep's cursor and conditional writes make a cut-off sweep
 * harmless): stop accepting and let the requests in flight answer; stop the repair sweep (at its next
 * unit of work) and the stream (after its batch in flight) at once, so neither starts anything new; then
 * close the store (dynalite and the journal, or DynamoDB Local's JVM, killed if it has not gone by then)
 * and give up the data folder.
 */
async function stopLocalAllot(
  parts: {
    listener: Listener;
    repairs?: RepairLoop;
    ttl?: LocalTtl;
    stream?: StreamFeed;
    history?: StreamFeed;
    store: AllotStore;
    lock?: DataLock;
    clients: DynamoDBClient[];
    invocations?: (until: number) => Promise<void>;
  },
  by: number,
): Promise<StopReport> {
  const started = Date.now();
  const at = (share: number) => started + Math.max(0, by - started) * share;
  const abandoned: string[] = [];
  parts.lock?.update({ state: 'stopping' });
  const repairs = parts.repairs?.stop();
  const ttl = parts.ttl?.stop();
  const stream = parts.stream?.stop();
  const cut = await parts.listener.stop(at(0.4));
  if (cut > 0) abandoned.push(`${cut} request(s) in flight`);
  await parts.invocations?.(at(0.5));
  if (repairs && !(await within(repairs, at(0.6)))) abandoned.push('the repair sweep');
  if (ttl && !(await within(ttl, at(0.6)))) abandoned.push("the TTL emulation's pass");
  if (stream && !(await within(stream, at(0.6)))) abandoned.push("the stream's batch in flight");
  // The history's reader last: with dynalite it keeps no journal, so what it reads of the records before
  // the stop (the last requests' and the stream's last batch's) is what a restart's sweep need not mend.
  if (parts.history && !(await within(parts.history.drained(), at(0.7))))
    abandoned.push("the history's records not yet read");
  if (parts.history && !(await within(parts.history.stop(), at(0.75))))
    abandoned.push("the history's batch in flight");
  // In-flight SDK calls of what was abandoned end here (their sockets are destroyed).
  for (const client of parts.clients) client.destroy();
  if (!(await within(parts.store.close(), at(0.9)))) {
    parts.store.abort();
    abandoned.push('closing the store');
  }
  parts.lock?.release();
  return { ms: Date.now() - started, abandoned };
}

/** Waits for `work` until `until` (epoch ms): true if it finished (or failed) by then. */
async function within(work: Promise<unknown>, until: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<false>(
      (resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()))),
    ),
  ]);
  clearTimeout(timer);
  return finished;
}
