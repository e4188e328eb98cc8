/**
 * The pools of other namespaces shared with a namespace (api.md, "Pools shared with other namespaces";
 * `GET /v1/namespaces/{ns}/sharedpools`, what `allot get pools` shows a tenant): each with its candidates
 * and the tenant's own usage and limit. Nothing of other tenants: no `sharedWith`, no other holder.
 */
import { API_VERSION } from '../../domain/kinds.ts';
import { poolObject } from '../../domain/objects/objects.ts';
import type { PoolRecord } from '../../domain/objects/records.ts';
import { shareEntryFor, shareFor } from '../../domain/objects/sharing.ts';
import { poolKeyOf } from '../../store/keys.ts';
import type { ClaimContext } from '../context.ts';
import { namespaceOf, type OperationRequest, type Reply } from './common.ts';

export async function listSharedPools(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const items: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const id of await ctx.table.quotas.sharedWith(namespace)) {
    const text = `${id.namespace}#${id.kind}#${id.name}`;
    if (seen.has(text) || id.namespace === namespace) continue;
    seen.add(text);
    const pool = await ctx.table.get<PoolRecord>(poolKeyOf(id));
    if (pool?.t !== 'pool' || !shareFor(pool, namespace)) continue;
    const holders = await ctx.table.quotas.holdersOf(id, namespace);
    items.push(sharedPoolObject(pool, namespace, holders.length));
  }
  return { statusCode: 200, body: { apiVersion: 'v1', kind: 'SharedPoolList', items } };
}

/** A pool as a namespace it is shared with sees it. */
function sharedPoolObject(pool: PoolRecord, namespace: string, allocated: number): Record<string, unknown> {
  const { sharedWith: _others, ...spec } = pool.spec;
  const { status, metadata } = poolObject(pool) as { status: Record<string, unknown>; metadata: object };
  const entry = shareEntryFor(pool, namespace);
  const { allocated: _everyone, ...rest } = status;
  return {
    apiVersion: API_VERSION,
    kind: pool.kind,
    metadata,
    spec,
    status: {
      ...rest,
      share: {
        namespace,
        allocated,
        ...(entry?.maxAllocations !== undefined && { maxAllocations: entry.maxAllocations }),
      },
    },
  };
}
