/**
 * Test helpers: an Allot on an in-memory store (each test file its own store and table), and a small
 * HTTP client for the contract. The store is ALLOT_STORE's (lib/local/stores.ts): dynalite, or DynamoDB
 * Local in the second tier of vitest.config.ts.
 */
import { afterAll, beforeAll } from 'vitest';
import { startLocalAllot, type LocalAllot, type LocalAllotOptions } from '../../lib/local/server.ts';
import { openStore, type AllotStore } from '../../lib/local/stores.ts';

let tables = 0;

type TestAllotOptions = Pick<LocalAllotOptions, 'stream' | 'apiClient' | 'watch' | 'ttlIntervalMs'>;

/** The store alone, in memory, for tests that build their own handlers on it. */
export function startTestStore(): Promise<AllotStore> {
  return openStore({ dataDir: ':memory:' });
}

/**
 * Starts Allot on a free port with an in-memory store; `stream: false` leaves the stream to the test,
 * `apiClient` gives the HTTP handler its own client (with faults, test/helpers/faults.ts).
 */
export async function startTestAllot(options: TestAllotOptions = {}): Promise<LocalAllot> {
  return startLocalAllot({
    dataDir: ':memory:',
    port: 0,
    tableName: `allot-test-${process.pid}-${++tables}`,
    stream: options.stream,
    apiClient: options.apiClient,
    watch: options.watch,
    ttlIntervalMs: options.ttlIntervalMs,
  });
}

/**
 * The one setup of an integration file: a test Allot started before the file's tests and closed after
 * them, and a client of its API. Both are usable from the file's top level: they reach the server once
 * it has started (a hook registered after this one, or any test, runs after it starts).
 */
export function useTestAllot(options: TestAllotOptions = {}): {
  allot: LocalAllot;
  api: ReturnType<typeof client>;
} {
  let started: LocalAllot | undefined;
  beforeAll(async () => {
    started = await startTestAllot(options);
  });
  afterAll(() => started?.close());
  const current = () => {
    if (!started) throw new Error('the test Allot is not started yet: use it inside a hook or a test');
    return started;
  };
  // A stand-in that forwards to the started server, so a file names it once at the top.
  const allot = new Proxy({} as LocalAllot, { get: (_target, key) => Reflect.get(current(), key) });
  return { allot, api: client(() => current().url) };
}

export interface Answer<T = Record<string, any>> {
  status: number;
  body: T;
}

/** Calls the API (a path from `/` as is, else in the namespace); `body` objects are sent as JSON. */
export function client(baseUrl: string | (() => string), namespace = 'default') {
  const base = typeof baseUrl === 'string' ? () => baseUrl : baseUrl;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const url = path.startsWith('/') ? `${base()}${path}` : `${base()}/v1/namespaces/${namespace}/${path}`;
    const response = await fetch(url, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keeps the text: a test that expects JSON fails on it
    }
    return { status: response.status, body: parsed } as Answer;
  };
  return {
    get: (path: string) => call('GET', path),
    post: (path: string, body: unknown, headers?: Record<string, string>) =>
      call('POST', path, body, headers),
    put: (path: string, body: unknown, headers?: Record<string, string>) => call('PUT', path, body, headers),
    delete: (path: string) => call('DELETE', path),
    call,
  };
}

/**
 * How long a stream effect may take, at most (a check that passes returns at once): generous, because
 * the suite runs three files at a time on two cores, and DynamoDB Local's change feed is polled (a 5 s
 * bound there failed once in a clean-clone run).
 */
const STREAM_PATIENCE_MS = 15_000;

/** Polls until `check` passes or `ms` elapse (stream effects are asynchronous by design). */
export async function eventually<T>(check: () => Promise<T>, ms = STREAM_PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

export const API_VERSION = 'pool.networking.metal.ironcore.dev/v1alpha1';

export function indexPool(name: string, ranges: unknown[], extra: Record<string, unknown> = {}) {
  return { apiVersion: API_VERSION, kind: 'IndexPool', metadata: { name }, spec: { ranges, ...extra } };
}

export function claim(name: string, poolRef: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { apiVersion: API_VERSION, kind: 'Claim', metadata: { name }, spec: { poolRef, ...extra } };
}
