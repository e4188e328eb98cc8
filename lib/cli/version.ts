/**
 * `allot version`: the CLI's version and the server's, as `kubectl version` prints both. The version is
 * written in one place, package.json: the package, this CLI (bundled with it at pack time) and the
 * server's `GET /version` (lib/http/kube/version.ts) all read it there.
 */
import packageJson from '../../package.json' with { type: 'json' };
import { CliError, type ApiClient } from './http.ts';

export const CLI_VERSION = packageJson.version;

export async function versionCommand(
  api: ApiClient,
  args: readonly string[],
  io: { out(text: string): void },
  clientOnly: boolean,
): Promise<number> {
  if (args.length) throw new CliError(`version takes no arguments (got ${args.join(' ')})`, [], 2);
  io.out(`Client Version: v${CLI_VERSION}`);
  if (clientOnly) return 0;
  const answer = await api.call('GET', '/version');
  const server = answer.body?.gitVersion;
  if (answer.status !== 200 || typeof server !== 'string')
    throw new CliError(`${api.endpoint}/version answered ${answer.status}, not a version`);
  io.out(`Server Version: ${server} (${api.endpoint})`);
  return 0;
}
