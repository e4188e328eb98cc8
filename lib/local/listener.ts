/**
 * The local server's HTTP listener, and how it stops (issue 22). `server.close()` alone only stops
 * listening: Node 20 goes on answering, without `Connection: close`, on every kept-alive socket, and a
 * client that calls in a loop (16 of them, a console tab polling every 2 s, a controller) keeps its
 * socket busy for as long as it calls, so the server never finished closing; an idle socket still held it
 * for the keep-alive timeout (5 s). So a stop: stops listening; answers what arrives after it with 503
 * and `Connection: close`; marks every answer still being prepared `Connection: close`; closes the idle
 * sockets; lets the requests in flight finish until a deadline; then ends every connection left
 * (`server.closeAllConnections()`, https://nodejs.org/docs/latest-v20.x/api/http.html#servercloseallconnections).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** The port could not be listened on: `message` is the one line to print. */
export class PortUnavailableError extends Error {
  constructor(
    readonly port: number,
    readonly code: string | undefined,
  ) {
    super(
      code === 'EADDRINUSE'
        ? `port ${port} is in use; set PORT to another port (PORT=0 takes any free one)`
        : `cannot listen on 127.0.0.1:${port} (${code ?? 'unknown error'}); set PORT to another port`,
    );
    this.name = 'PortUnavailableError';
  }
}

export interface Listener {
  readonly port: number;
  /** Starts answering with `handler`; requests that arrived before wait for it. */
  serve(handler: RequestHandler): void;
  /** Whether a stop has begun. */
  readonly stopping: boolean;
  /**
   * Stops: nothing new is accepted at once; requests in flight may finish until `drainBy` (epoch ms),
   * then every connection is ended. Resolves, when none is left, with how many requests were cut off.
   */
  stop(drainBy: number): Promise<number>;
}

const STOPPING_BODY = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code: 503,
  reason: 'ServiceUnavailable',
  message: 'the server is stopping',
});

/** Listens on 127.0.0.1:`port` (0: a free one); throws PortUnavailableError when it cannot. */
export async function listen(port: number): Promise<Listener> {
  let handler: RequestHandler | undefined;
  let waiting: (() => void)[] = [];
  let stopping = false;
  const inFlight = new Set<ServerResponse>();
  let settled: (() => void) | undefined;
  const server: Server = createServer((request, response) => {
    if (stopping) {
      response.writeHead(503, { 'content-type': 'application/json', connection: 'close' });
      response.end(STOPPING_BODY);
      return;
    }
    inFlight.add(response);
    response.once('close', () => {
      inFlight.delete(response);
      if (inFlight.size === 0) settled?.();
    });
    if (handler) handler(request, response);
    else waiting.push(() => handler!(request, response));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new PortUnavailableError(port, error.code)),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    get stopping() {
      return stopping;
    },
    serve(given) {
      handler = given;
      for (const resume of waiting.splice(0)) resume();
    },
    async stop(drainBy) {
      if (stopping) return 0;
      stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const response of inFlight) if (!response.headersSent) response.setHeader('connection', 'close');
      server.closeIdleConnections();
      waiting = [];
      if (inFlight.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, drainBy - Date.now()));
          settled = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const cut = inFlight.size;
      server.closeAllConnections();
      await closed;
      return cut;
    },
  };
}
