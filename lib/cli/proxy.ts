/**
 * A signing forwarder on 127.0.0.1, like `kubectl proxy`: requests that come in unsigned go out to a
 * deployed API signed with SigV4 (execute-api) from the standard AWS credential chain, so no browser or
 * local tool ever holds AWS keys and the API stays IAM-only. One implementation for `allot proxy`
 * (kubectl) and `allot ui` (which serves the console's page through the `serve` hook).
 *
 * A watch (`?watch=true`) behind API Gateway is a long poll that ends after its first events (the HTTP
 * API cuts any answer at 30 s), and `kubectl get -w` stops when its answer ends; so the proxy holds the
 * client's watch open and polls the API again from the last resourceVersion it got (asking for
 * bookmarks, so it goes on past events a selector leaves out), streaming each event as it comes: a
 * watch through `allot proxy` lasts as long as the client wants, as against a Kubernetes API server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { regionOfEndpoint, signedHeaders, type CredentialProvider } from './http.ts';

export const DEFAULT_PROXY_PORT = 8001;

export interface SigningProxyOptions {
  /** The deployed API, e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com`. */
  endpoint: string;
  /** The local port; 0 picks a free one. Default 8001 (kubectl proxy's). */
  port?: number;
  /** Whether to sign (default true); `allot proxy` to a local server's http endpoint passes false. */
  sign?: boolean;
  /** For signing; default: from the endpoint's host name. */
  region?: string;
  /** Default: the AWS credential chain (environment, profile, SSO, container or instance role). */
  credentials?: CredentialProvider;
  /** Answers a request itself (true) instead of forwarding it: `allot ui` serves the console here. */
  serve?: (request: IncomingMessage, response: ServerResponse) => boolean;
}

export interface SigningProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** Bodies larger than this are refused before signing (the API's own limit is 64 KiB). */
const MAX_BODY_BYTES = 1024 * 1024;
/** Request headers that go on (and are signed); the browser's cookies and the like stay here. */
const FORWARDED_HEADERS = ['accept', 'content-type'] as const;
/** Answer headers that come back. */
const RETURNED_HEADERS = ['content-type', 'location', 'retry-after'] as const;

/** The deployed API the proxy forwards to, and how it signs for it. */
interface UpstreamApi {
  endpoint: URL;
  /** The endpoint's path, without a trailing slash: the request's path goes after it. */
  base: string;
  sign: boolean;
  region: string | undefined;
  credentials: CredentialProvider;
}

export async function startSigningProxy(options: SigningProxyOptions): Promise<SigningProxy> {
  const endpoint = new URL(options.endpoint);
  const sign = options.sign ?? true;
  const region = options.region || regionOfEndpoint(options.endpoint);
  if (sign && !region) {
    throw new Error(`cannot tell the region of ${options.endpoint}; pass a region (--region or AWS_REGION)`);
  }
  const api: UpstreamApi = {
    endpoint,
    base: endpoint.pathname.replace(/\/+$/, ''),
    sign,
    region,
    credentials: options.credentials ?? defaultProvider(),
  };
  let origin = '';

  const server: Server = createServer((request, response) => {
    if (!fromOwnPage(request, origin)) {
      answer(response, 403, 'Forbidden', 'the proxy serves only pages of its own origin');
      return;
    }
    if (options.serve?.(request, response)) return;
    void forward(api, request, response).catch((error: unknown) => {
      answer(response, 502, 'BadGateway', `cannot reach ${endpoint.origin}: ${(error as Error).message}`);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PROXY_PORT, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Only this machine's own pages may use the proxy: a page from elsewhere (a cross-site request, or a
 * DNS name rebound to 127.0.0.1) would otherwise have its calls signed with the user's keys.
 */
function fromOwnPage(request: IncomingMessage, origin: string): boolean {
  const host = request.headers.host ?? '';
  const sentOrigin = request.headers.origin;
  return (
    isLocalHost(host) &&
    (sentOrigin === undefined || sentOrigin === origin || sentOrigin === `http://${host}`)
  );
}

/** Sends one request upstream, signed; undefined when it cannot be signed (answered 401 here). */
async function send(
  api: UpstreamApi,
  response: ServerResponse,
  method: string,
  url: URL,
  headers: Record<string, string>,
  text: string | undefined,
  signal?: AbortSignal,
): Promise<Response | undefined> {
  let sent = headers;
  if (api.sign) {
    try {
      sent = await signedHeaders(
        { method, url, headers, body: text },
        { region: api.region!, credentials: api.credentials },
      );
    } catch (error) {
      answer(response, 401, 'Unauthorized', `cannot sign the request: ${(error as Error).message}`);
      return undefined;
    }
    delete sent.host; // fetch sets it from the URL
  }
  return fetch(url, { method, headers: sent, body: text, redirect: 'manual', signal });
}

async function forward(api: UpstreamApi, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await readBody(request);
  if (body === undefined) {
    answer(response, 413, 'RequestEntityTooLarge', `the body is over ${MAX_BODY_BYTES} bytes`);
    return;
  }
  const incoming = new URL(request.url ?? '/', 'http://127.0.0.1');
  const url = new URL(`${api.endpoint.origin}${api.base}${incoming.pathname}${incoming.search}`);
  const method = request.method ?? 'GET';
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  if (method === 'GET' && ['true', '1'].includes(url.searchParams.get('watch') ?? ''))
    return watch(api, response, url, headers);
  const upstream = await send(api, response, method, url, headers, body.length > 0 ? body : undefined);
  if (!upstream) return;
  response.writeHead(upstream.status, returnedHeaders(upstream));
  response.end(Buffer.from(await upstream.arrayBuffer()));
}

/** A client's watch, held open over the API's long polls (see the top of this file). */
async function watch(
  api: UpstreamApi,
  response: ServerResponse,
  url: URL,
  headers: Record<string, string>,
): Promise<void> {
  const bookmarks = ['true', '1'].includes(url.searchParams.get('allowWatchBookmarks') ?? '');
  const timeout = Number(url.searchParams.get('timeoutSeconds') ?? '0');
  const deadline = timeout > 0 ? Date.now() + timeout * 1000 : Infinity;
  let gone = false;
  const stop = new AbortController();
  response.on('close', () => {
    gone = true;
    stop.abort();
  });
  url.searchParams.set('allowWatchBookmarks', 'true');
  for (let first = true; !gone && Date.now() < deadline; first = false) {
    if (timeout > 0)
      url.searchParams.set('timeoutSeconds', String(Math.ceil((deadline - Date.now()) / 1000)));
    let upstream: Response | undefined;
    let text: string;
    try {
      upstream = await send(api, response, 'GET', url, headers, undefined, stop.signal);
      if (!upstream) return;
      text = await upstream.text();
    } catch (error) {
      if (gone) return; // the client left: so does its watch
      if (first) throw error;
      const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 502, reason: 'BadGateway' };
      const message = `cannot reach ${api.endpoint.origin}: ${(error as Error).message}`;
      response.end(`${JSON.stringify({ type: 'ERROR', object: { ...status, message } })}\n`);
      return;
    }
    if (upstream.status !== 200) {
      // Before the first event, the API's own answer; after it, an ERROR event, as Kubernetes sends.
      if (first) {
        response.writeHead(upstream.status, returnedHeaders(upstream));
        response.end(text);
      } else response.end(`${JSON.stringify({ type: 'ERROR', object: JSON.parse(text) as unknown })}\n`);
      return;
    }
    if (first) response.writeHead(200, { 'content-type': 'application/json' });
    relayEvents(text, url, response, bookmarks);
  }
  response.end();
}

/**
 * Streams one poll's events to the client, and moves the next poll on from the last resourceVersion.
 * Bookmarks (always asked for) go on only if the client asked for them.
 */
function relayEvents(text: string, url: URL, response: ServerResponse, bookmarks: boolean): void {
  for (const line of text.split('\n').filter((part) => part.trim())) {
    const event = JSON.parse(line) as {
      type?: string;
      object?: { metadata?: { resourceVersion?: string } };
    };
    const version = event.object?.metadata?.resourceVersion;
    if (version) url.searchParams.set('resourceVersion', version);
    if (event.type !== 'BOOKMARK' || bookmarks) response.write(`${line}\n`);
  }
}

function returnedHeaders(upstream: Response): Record<string, string> {
  const returned: Record<string, string> = {};
  for (const name of RETURNED_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) returned[name] = value;
  }
  return returned;
}

function isLocalHost(host: string): boolean {
  return /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(host);
}

/** The body as text, or undefined past the limit. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An error of the proxy's own, in the API's Status shape, so clients read it like any other. */
function answer(response: ServerResponse, code: number, reason: string, message: string): void {
  response.writeHead(code, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message }),
  );
}
