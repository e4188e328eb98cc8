/**
 * `allot ui --endpoint URL`: the console for a deployed API. The page is served on 127.0.0.1 and its
 * API calls go out through the signing proxy (proxy.ts), signed with SigV4 from the AWS credential
 * chain, so the browser never holds AWS keys and the API stays IAM-only.
 */
import { serveConsole } from '../console/serve.ts';
import { CliError, type CredentialProvider } from './http.ts';
import { startSigningProxy } from './proxy.ts';

export const DEFAULT_UI_PORT = 8001;

export interface UiOptions {
  endpoint: string | undefined;
  port: string | undefined;
  region: string | undefined;
  credentials?: CredentialProvider;
  out(text: string): void;
  /** Resolves when the console should stop (SIGINT or SIGTERM by default). */
  stop?: Promise<unknown>;
}

export async function runUi(options: UiOptions): Promise<number> {
  if (!options.endpoint) {
    throw new CliError(
      'allot ui needs --endpoint (or ALLOT_ENDPOINT): the deployed API. `npm start` serves the console itself, at its own URL.',
      [],
      2,
    );
  }
  const port = options.port === undefined ? DEFAULT_UI_PORT : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port must be a port number 0..65535, not "${options.port}"`, [], 2);
  }
  let proxy;
  try {
    proxy = await startSigningProxy({
      endpoint: options.endpoint,
      port,
      region: options.region,
      credentials: options.credentials,
      serve: serveConsole,
    });
  } catch (error) {
    throw new CliError(`cannot serve the console: ${(error as Error).message}`);
  }
  options.out(
    `Allot console on ${proxy.url}/ for ${options.endpoint} (requests signed with SigV4; Ctrl-C stops)`,
  );
  await (options.stop ?? interrupted());
  await proxy.close();
  return 0;
}

function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
