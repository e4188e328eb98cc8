/**
 * The local Allot: the store lib/local/stores.ts chooses (dynalite in-process unless ALLOT_STORE says
 * otherwise) with its stream feeding the real stream handler, and a
 * node:http server that turns requests into API Gateway (HTTP API, payload 2.0) events for the real HTTP
 * handler, which dispatches from the same route table as the deployed API.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createHttpHandler, MAX_BODY_BYTES } from '../../functions/http.ts';
import { createStreamHandler } from '../../functions/stream.ts';
import { createHistoryHandler } from '../../functions/history.ts';
import { LONG_POLL_MS, STREAM_WATCH_MS, type WatchSink } from '../../functions/http-chain.ts';
import { HISTORY_FILTER_PATTERNS } from '../cloud/stream-filter.ts';
import { RESOURCES } from '../domain/kinds.ts';
import { resetHistories } from '../service/history.ts';
import { RepairStore } from '../store/repairs.ts';
import { createClaimHandler } from '../../functions/claim.ts';
import { createReleaseHandler } from '../../functions/release.ts';
import type { EventSink } from '../domain/events.ts';
import { FileEventSink, MemoryEventSink } from './events.ts';
import { Table } from '../store/table.ts';
import { openStore, type AllotStore, type StoreKind, type StreamFeed } from './stores.ts';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { serveConsole } from '../console/serve.ts';
import { LOCAL_REPAIR_INTERVAL_MS, startRepairLoop, type RepairLoop } from './repairs.ts';

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
  /** The HTTP handler's own DynamoDB client, made for the store's endpoint (tests give it faults). */
  apiClient?: (endpoint: string) => DynamoDBClient;
  /**
   * How watches answer: streamed as changes come (the default), or as the deployed API's long polls
   * (`longPoll`: an answer ends after its first events), and for at most `answerMs` (tests: a server
   * that ends every watch early); `onAnswer` hears each answer's lines once it ends (tests).
   */
  watch?: { longPoll?: boolean; answerMs?: number; onAnswer?: (url: string, lines: string[]) => void };
}

/** The functions a direct invocation can reach (Lambda Invoke, or an EventBridge rule's target). */
export type InvocableFunction = 'claim' | 'release';

export interface LocalAllot {
  url: string;
  table: Table;
  store: AllotStore;
  stream?: StreamFeed;
  /** What feeds the history function (the stream's second reader, for watches). */
  history?: StreamFeed;
  /** The repair sweep's local schedule, when it runs. */
  repairs?: RepairLoop;
  /**
   * Where the stream function's events go: `<dataDir>/events.jsonl`, or memory (`events.events`) for
   * `:memory:`.
   */
  events: EventSink;
  /** Invokes the claim or release function with a payload or an EventBridge event, as Lambda would. */
  invoke(functionName: InvocableFunction, event: unknown): Promise<unknown>;
  close(): Promise<void>;
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

/**
 * The sink a watch streams its lines into, when the request is one (GET with `watch=true`): the answer's
 * head goes out with the first line, and the watch stops when the client goes.
 */
function watchStream(
  response: ServerResponse,
  mode: LocalAllotOptions['watch'],
): { sink: WatchSink; controller: AbortController; started(): boolean; lines: string[] } | undefined {
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
  const sink: WatchSink = {
    signal: controller.signal,
    open,
    endAfterEvents: mode?.longPoll ?? false,
    ...((mode?.answerMs ?? (mode?.longPoll ? LONG_POLL_MS : undefined)) !== undefined && {
      maxMs: mode?.answerMs ?? LONG_POLL_MS,
    }),
    write(line) {
      open();
      lines.push(line);
      response.write(`${line}\n`);
    },
  };
  return { sink, controller, started: () => started, lines };
}

/** Every namespace the registry knows (store/repairs.ts). */
async function registeredNamespaces(table: Table): Promise<string[]> {
  const registry = new RepairStore(table);
  const names: string[] = [];
  for (let after: string | undefined; ;) {
    const page = await registry.namespaces(100, after);
    names.push(...page.items);
    if (page.last === undefined) return names;
    after = page.last;
  }
}

export async function startLocalAllot(options: LocalAllotOptions): Promise<LocalAllot> {
  const store = await openStore({ kind: options.store, dataDir: options.dataDir });
  const client = store.client();
  const tableName = options.tableName ?? store.defaultTableName;
  await store.prepareTable(tableName);
  const table = new Table({ tableName, client });
  const events =
    options.dataDir === ':memory:'
      ? new MemoryEventSink()
      : new FileEventSink(join(options.dataDir, 'events.jsonl'));
  let stream: StreamFeed | undefined;
  let history: StreamFeed | undefined;
  if (options.stream !== false) {
    // The history's reader keeps no journal with dynalite: positions from before this start are gone.
    if (store.kind === 'dynalite' && options.dataDir !== ':memory:')
      await resetHistories(table, await registeredNamespaces(table), RESOURCES);
    const historyHandler = createHistoryHandler({ table }, { prune: true });
    history = await store.startStream(tableName, {
      handler: (event) => historyHandler(event, fakeContext('allot-history')),
      reader: { name: 'history', filters: HISTORY_FILTER_PATTERNS },
      onFailure: (record, error) =>
        console.error(`history record ${record.dynamodb?.SequenceNumber} failed`, error ?? ''),
    });
    const streamHandler = createStreamHandler({ table }, { events });
    stream = await store.startStream(tableName, {
      handler: (event) => streamHandler(event, fakeContext('allot-stream')),
      onFailure: (record, error) =>
        console.error(`stream record ${record.dynamodb?.SequenceNumber} failed after retries`, error ?? ''),
    });
  }
  const apiClient = options.apiClient?.(store.endpoint);
  const httpHandler = createHttpHandler({
    table: apiClient ? new Table({ tableName, client: apiClient }) : table,
  });
  const invocable = {
    claim: createClaimHandler({ table }),
    release: createReleaseHandler({ table }),
  };
  const watches = new Set<AbortController>();
  const server: Server = createServer((request, response) => {
    // `GET /` is the console (lib/console), a client of the API below like any other.
    if (serveConsole(request, response)) return;
    void (async () => {
      let result: APIGatewayProxyStructuredResultV2;
      const stream = watchStream(response, options.watch);
      try {
        const event = toEvent(request, await readBody(request));
        if (stream) {
          watches.add(stream.controller);
          (event as { watchSink?: WatchSink }).watchSink = stream.sink;
        }
        // A streamed watch lasts as long as its answer; middy would cut it at the context's time.
        const context = fakeContext('allot-api', stream ? STREAM_WATCH_MS + 60_000 : undefined);
        result = (await httpHandler(event, context)) as APIGatewayProxyStructuredResultV2;
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
      if (stream) {
        watches.delete(stream.controller);
        options.watch?.onAnswer?.(request.url ?? '', stream.lines);
      }
      if (stream?.started()) {
        response.end();
        return;
      }
      response.writeHead(result.statusCode ?? 200, {
        'content-type': 'application/json',
        ...(result.headers as Record<string, string>),
      });
      response.end(result.body ?? '');
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const repairIntervalMs =
    options.repairIntervalMs ??
    (process.env.ALLOT_REPAIR_INTERVAL_MS !== undefined
      ? Number(process.env.ALLOT_REPAIR_INTERVAL_MS)
      : options.dataDir === ':memory:'
        ? 0
        : LOCAL_REPAIR_INTERVAL_MS);
  const repairs = stream && repairIntervalMs > 0 ? startRepairLoop({ table }, repairIntervalMs) : undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    table,
    store,
    stream,
    history,
    repairs,
    events,
    invoke: (functionName, event) =>
      invocable[functionName](event as never, fakeContext(`allot-${functionName}`)),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const watch of watches) watch.abort();
      server.closeIdleConnections();
      await closed;
      await repairs?.stop();
      await history?.stop();
      await stream?.stop();
      apiClient?.destroy();
      client.destroy();
      await store.close();
    },
  };
}
