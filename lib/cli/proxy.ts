/**
 * The signing proxy (`allot proxy`, and the console's `allot ui`): serves on 127.0.0.1 and forwards every
 * request to a deployed API, signed with SigV4 for `execute-api` from the given credentials, because the
 * deployed API is IAM-only and kubectl (or a browser) cannot sign. One implementation for both commands.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signedHeaders, type CredentialProvider } from './http.ts';

export const DEFAULT_PROXY_PORT = 8001;
/** Far above the API's own 64 KiB, so the API (not the proxy) answers a body that is too large. */
const MAX_PROXY_BODY_BYTES = 1024 * 1024;
/**
 * The Host names the proxy answers (kubectl proxy's default `--accept-hosts`): a web page whose name an
 * attacker points at 127.0.0.1 (DNS rebinding) must not reach the API with your credentials.
 */
const LOCAL_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;
/** The request headers passed on (and signed); the rest (kubectl's session ids, cookies) stay here. */
const FORWARDED_HEADERS = ['accept', 'content-type'] as const;

export interface SigningProxyOptions {
  /** The deployed API's URL, e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com`. */
  endpoint: string;
  /** The local port; 0 picks a free one. Default 8001 (kubectl proxy's). */
  port?: number;
  region: string;
  credentials: CredentialProvider;
  /** Whether to sign: by default when the endpoint is https (a local server needs no signature). */
  sign?: boolean;
  /** Answers requests the proxy serves itself (a console's page); resolves false to forward the request. */
  serveLocally?: (request: IncomingMessage, response: ServerResponse) => boolean | Promise<boolean>;
}

export interface SigningProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  close(): Promise<void>;
}

function status(response: ServerResponse, code: number, reason: string, message: string): void {
  response.writeHead(code, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message }),
  );
}

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_PROXY_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function startSigningProxy(options: SigningProxyOptions): Promise<SigningProxy> {
  const endpoint = options.endpoint.replace(/\/+$/, '');
  const base = new URL(endpoint);
  const sign = options.sign ?? base.protocol === 'https:';

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!LOCAL_HOST.test(request.headers.host ?? '')) {
      status(response, 403, 'Forbidden', 'the proxy answers requests for 127.0.0.1 and localhost only');
      return;
    }
    if (await options.serveLocally?.(request, response)) return;
    const body = await readBody(request);
    if (body === undefined) {
      status(response, 413, 'RequestEntityTooLarge', `the body is over ${MAX_PROXY_BODY_BYTES} bytes`);
      return;
    }
    // The path and query go on as they came (the API's path policies see what the client sent).
    const url = new URL(`${endpoint}${request.url ?? '/'}`);
    const method = request.method ?? 'GET';
    const text = body.length > 0 ? body.toString('utf8') : undefined;
    let headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    if (sign) {
      try {
        headers = await signedHeaders(
          { method, url, headers, body: text },
          { region: options.region, credentials: options.credentials },
        );
      } catch (error) {
        status(response, 502, 'BadGateway', `cannot sign the request: ${(error as Error).message}`);
        return;
      }
      // fetch sets Host itself; sending it twice is refused.
      delete headers.host;
    }
    let answer: Response;
    try {
      answer = await fetch(url, { method, headers, body: text, redirect: 'manual' });
    } catch (error) {
      status(
        response,
        502,
        'BadGateway',
        `cannot reach ${endpoint}: ${String((error as Error).cause ?? error)}`,
      );
      return;
    }
    const reply = Buffer.from(await answer.arrayBuffer());
    const type = answer.headers.get('content-type');
    response.writeHead(answer.status, type ? { 'content-type': type } : {});
    response.end(reply);
  }

  const server: Server = createServer((request, response) => {
    forward(request, response).catch((error: unknown) => {
      if (!response.headersSent) status(response, 502, 'BadGateway', `proxy error: ${String(error)}`);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PROXY_PORT, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // kubectl keeps its connections open; stopping the proxy ends them.
      server.closeAllConnections();
      await closed;
    },
  };
}
