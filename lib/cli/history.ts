/**
 * `allot history <value> --pool <kind>/<name> [--at T | --since S --until U]`, or `--pool` alone (the
 * pool's, `--within R` those of a range or CIDR), or `--claim <name>` (every claim of that name's): who
 * held the values, and when (api.md, "The history of a value"; docs/history.md). `--pool
 * <namespace>/<kind>/<name>` of another namespace than `-n`'s reads a shared pool as `-n` sees it: its
 * own claims' holdings (`?poolNamespace=`, the path in `-n`'s namespace, as a tenant may ask).
 */
import type { ApiObject } from '../domain/objects/objects.ts';
import { renderTable, type Column } from './format.ts';
import { failure } from './answers.ts';
import { CliError, type ApiClient } from './http.ts';
import { poolFlag } from './resources.ts';
import { poolKindInfo } from '../domain/kinds.ts';

export interface HistoryOptions {
  namespace: string;
  pool?: string;
  claim?: string;
  at?: string;
  since?: string;
  until?: string;
  within?: string;
  output: string;
}

type Holding = Record<string, any>;

const cell = (holding: ApiObject, key: string) => String((holding as Holding)[key] ?? '-');
const COLUMNS: Column[] = [
  { header: 'VALUE', value: (h) => cell(h, 'value') },
  {
    header: 'CLAIM',
    value: (h) => {
      const claim = (h as Holding).claim;
      return claim ? `${claim.namespace}/${claim.name}` : '<none>';
    },
  },
  { header: 'FROM', value: (h) => cell(h, 'from') },
  { header: 'UNTIL', value: (h) => cell(h, 'until') },
  { header: 'ENDED', value: (h) => cell(h, 'ended') },
  { header: 'OBJECT', value: (h) => String((h as Holding).allocation?.name ?? '-') },
  { header: 'POOL', value: (h) => `${(h as Holding).pool?.kind}/${(h as Holding).pool?.name}`, wide: true },
];

export async function historyCommand(
  api: ApiClient,
  args: readonly string[],
  options: HistoryOptions,
  out: (text: string) => void,
): Promise<number> {
  const [value, ...rest] = args;
  if (rest.length || (options.claim === undefined) === (options.pool === undefined))
    throw new CliError(
      'usage: allot history [<value>] --pool <kind>/<name> [--within R] [--at T | --since S --until U], or allot history --claim <name>',
      [],
      2,
    );
  const params = new URLSearchParams();
  for (const key of ['at', 'since', 'until', 'within'] as const)
    if (options[key]) params.set(key, options[key]);
  let path: string;
  if (options.claim !== undefined) {
    if (value !== undefined || options.within !== undefined)
      throw new CliError('history --claim takes no value and no --within', [], 2);
    path = `/v1/namespaces/${encodeURIComponent(options.namespace)}/claims/${encodeURIComponent(options.claim)}/history`;
  } else {
    const pool = poolFlag(options.pool);
    const resource = poolKindInfo(pool.kind as never)!.resource;
    if (value !== undefined) params.set('value', value);
    if (pool.namespace !== undefined && pool.namespace !== options.namespace)
      params.set('poolNamespace', pool.namespace);
    path = `/v1/namespaces/${encodeURIComponent(options.namespace)}/${resource}/${encodeURIComponent(pool.name)}/history`;
  }
  const items: Holding[] = [];
  for (;;) {
    const answer = await api.call('GET', `${path}?${params}`);
    if (answer.status !== 200) throw failure(answer);
    items.push(...(answer.body.items as Holding[]));
    const next = answer.body.metadata?.continue as string | undefined;
    if (!next) break;
    params.set('continue', next);
  }
  if (options.output === 'json') out(JSON.stringify({ kind: 'HoldingList', items }, null, 2));
  else if (items.length === 0) out('no holdings');
  else out(renderTable(COLUMNS, items as ApiObject[], options.output === 'wide'));
  return 0;
}
