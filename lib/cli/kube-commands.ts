/**
 * `allot proxy` and `allot kubeconfig`: kubectl against a deployed API (IAM-only: the proxy signs every
 * call) or the local server.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { CliError, LOCAL_ENDPOINT, type CredentialProvider } from './http.ts';
import { kubeconfig } from './kubeconfig.ts';
import { DEFAULT_PROXY_PORT, startSigningProxy } from './proxy.ts';

/** What these commands need of main.ts's CliIO. */
interface CommandIO {
  out(text: string): void;
  env: Record<string, string | undefined>;
  credentials?: CredentialProvider;
  stop?: Promise<unknown>;
}

function portOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PROXY_PORT;
  const port = Number(text);
  if (!/^[0-9]{1,5}$/.test(text) || port > 65535)
    throw new CliError(`--port must be a port number (got ${text})`, [], 2);
  return port;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

export async function proxyCommand(
  args: string[],
  endpoint: string,
  region: string | undefined,
  io: CommandIO,
  options: { port?: string; endpoint?: string },
): Promise<number> {
  if (args.length) throw new CliError(`proxy takes no arguments (got ${args.join(' ')})`, [], 2);
  if (options.endpoint === undefined && io.env.ALLOT_ENDPOINT === undefined)
    throw new CliError(
      'proxy needs --endpoint <url> (or ALLOT_ENDPOINT): the deployed API to sign for',
      [],
      2,
    );
  const signs = new URL(endpoint).protocol === 'https:';
  if (signs && !region)
    throw new CliError(`cannot tell the region of ${endpoint}; pass --region or set AWS_REGION`);
  const credentials = io.credentials ?? defaultProvider();
  if (signs) {
    // Found now, not at kubectl's first call, so a missing profile is said once, here.
    try {
      await credentials();
    } catch (error) {
      throw new CliError(`cannot load AWS credentials to sign with: ${(error as Error).message}`);
    }
  }
  let proxy;
  try {
    proxy = await startSigningProxy({
      endpoint,
      port: portOf(options.port),
      region,
      credentials,
      sign: signs,
    });
  } catch (error) {
    throw new CliError(`cannot serve on 127.0.0.1:${portOf(options.port)}: ${(error as Error).message}`);
  }
  io.out(
    `Serving ${endpoint} on ${proxy.url}${signs ? ` (every call signed with SigV4, execute-api, ${region})` : ''}; Ctrl-C stops`,
  );
  io.out(`kubectl --server ${proxy.url} get indexpools`);
  await (io.stop ?? untilSignal());
  await proxy.close();
  return 0;
}

export function kubeconfigCommand(
  args: string[],
  endpoint: string,
  io: CommandIO,
  options: { port?: string; namespace: string },
): number {
  if (args.length) throw new CliError(`kubeconfig takes no arguments (got ${args.join(' ')})`, [], 2);
  const deployed = new URL(endpoint).protocol === 'https:';
  const lines = [
    '# kubectl against Allot: save as a file and export KUBECONFIG=<file> (or pass --kubeconfig <file>).',
    '# allot-local: the local server (npm start). allot-proxy: a deployed API through',
    `#   allot proxy --endpoint ${deployed ? endpoint : '<url>'} --port ${portOf(options.port)}`,
    kubeconfig({
      local: deployed ? LOCAL_ENDPOINT : endpoint,
      proxy: `http://127.0.0.1:${portOf(options.port)}`,
      namespace: options.namespace,
      current: deployed ? 'allot-proxy' : 'allot-local',
    }),
  ];
  io.out(lines.join('\n'));
  return 0;
}
