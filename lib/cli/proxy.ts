/**
 * A signing forwarder on 127.0.0.1, like `kubectl proxy`: requests that come in unsigned go out to a
 * deployed API signed with SigV4 (execute-api) from the standard AWS credential chain, so no browser or
 * local tool ever holds AWS keys and the API stays IAM-only. One implementation for `allot proxy`
 * (kubectl) and `allot ui` (which serves the console's page through the `serve` hook).
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

export async function startSigningProxy(options: SigningProxyOptions): Promise<SigningProxy> {
  const endpoint = new URL(options.endpoint);
  const sign = options.sign ?? true;
  const region = options.region || regionOfEndpoint(options.endpoint);
  if (sign && !region) {
    throw new Error(`cannot tell the region of ${options.endpoint}; pass a region (--region or AWS_REGION)`);
  }
  const credentials = options.credentials ?? defaultProvider();
  const base = endpoint.pathname.replace(/\/+$/, '');
  let origin = '';

  const server: Server = createServer((request, response) => {
    // Only this machine's own pages may use the proxy: a page from elsewhere (a cross-site request,
    // or a DNS name rebound to 127.0.0.1) would otherwise have its calls signed with the user's keys.
    const host = request.headers.host ?? '';
    const sentOrigin = request.headers.origin;
    if (
      !isLocalHost(host) ||
      (sentOrigin !== undefined && sentOrigin !== origin && sentOrigin !== `http://${host}`)
    ) {
      answer(response, 403, 'Forbidden', 'the proxy serves only pages of its own origin');
      return;
    }
    if (options.serve?.(request, response)) return;
    void forward(request, response).catch((error: unknown) => {
      answer(response, 502, 'BadGateway', `cannot reach ${endpoint.origin}: ${(error as Error).message}`);
    });
  });

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    if (body === undefined) {
      answer(response, 413, 'RequestEntityTooLarge', `the body is over ${MAX_BODY_BYTES} bytes`);
      return;
    }
    const incoming = new URL(request.url ?? '/', 'http://127.0.0.1');
    const url = new URL(`${endpoint.origin}${base}${incoming.pathname}${incoming.search}`);
    const method = request.method ?? 'GET';
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const text = body.length > 0 ? body : undefined;
    let sent = headers;
    if (sign) {
      try {
        sent = await signedHeaders({ method, url, headers, body: text }, { region: region!, credentials });
      } catch (error) {
        answer(response, 401, 'Unauthorized', `cannot sign the request: ${(error as Error).message}`);
        return;
      }
      delete sent.host; // fetch sets it from the URL
    }
    const upstream = await fetch(url, { method, headers: sent, body: text, redirect: 'manual' });
    const returned: Record<string, string> = {};
    for (const name of RETURNED_HEADERS) {
      const value = upstream.headers.get(name);
      if (value !== null) returned[name] = value;
    }
    response.writeHead(upstream.status, returned);
    response.end(Buffer.from(await upstream.arrayBuffer()));
  }

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
