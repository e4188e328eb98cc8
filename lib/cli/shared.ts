/**
 * What `allot get pools` adds in a tenant's namespace: the pools of other namespaces shared with it
 * (`GET …/sharedpools`), each with the namespace's own usage and limit (api.md, "Pools shared with other
 * namespaces").
 */
import { POOL_KINDS, type Resource } from '../domain/kinds.ts';
import { failure } from './answers.ts';
import { candidates, condition, renderTable, utilisationBar, type Column } from './format.ts';
import type { ApiClient } from './http.ts';

type ApiObject = Record<string, any>;

/** The shared pools of the kinds asked for; none when a selector was given (it selects own pools). */
export async function sharedPoolsOf(
  api: ApiClient,
  namespace: string,
  resources: readonly Resource[],
  selected: boolean,
): Promise<ApiObject[]> {
  const kinds = POOL_KINDS.filter((info) => resources.includes(info.resource)).map((info) => info.kind);
  if (kinds.length === 0 || selected) return [];
  const answer = await api.call('GET', `/v1/namespaces/${encodeURIComponent(namespace)}/sharedpools`);
  if (answer.status !== 200) throw failure(answer);
  return (answer.body.items as ApiObject[]).filter((item) => kinds.includes(item.kind));
}

export const SHARED_POOL_COLUMNS: readonly Column[] = [
  { header: 'NAMESPACE', value: (o) => o.metadata.namespace },
  { header: 'NAME', value: (o) => o.metadata.name },
  { header: 'KIND', value: (o) => o.kind },
  { header: 'HELD', value: (o) => String(o.status?.share?.allocated ?? 0) },
  { header: 'LIMIT', value: (o) => String(o.status?.share?.maxAllocations ?? '-') },
  { header: 'FREE', value: (o) => o.status?.free ?? '' },
  { header: 'AVAILABLE', value: (o) => condition(o, 'Available')?.status ?? 'Unknown' },
  {
    header: 'UTILISATION',
    value: (o) => utilisationBar(BigInt(o.status?.total ?? '0'), BigInt(o.status?.free ?? '0')),
    wide: true,
  },
  { header: 'CANDIDATES', value: candidates, wide: true },
];

export function renderSharedPools(
  namespace: string,
  pools: readonly ApiObject[],
  wide: boolean,
  after: boolean,
) {
  const title = `Shared with ${namespace} (claim with --pool <namespace>/<kind>/<name>):`;
  return `${after ? '\n' : ''}${title}\n${renderTable(SHARED_POOL_COLUMNS, pools, wide)}`;
}
