/**
 * Pools carved from a claim (`prefixesFrom`, api.md "Pools"): the pool record carries the claim's
 * value as `carved` once the claim holds one. Two writers keep it current and one of them always sees
 * the other: the pool's creation (its carving item first, then the claim read, then the pool) and the
 * stream function (the pool's INSERT reads the claim; a claim's settle reads the carving items). A pool
 * whose `carved` changes is a pool whose candidates changed: its generation is bumped, so the stream
 * recounts it and wakes the claims that wait for it, with no further call.
 */
import { poolInfoByResource } from '../../domain/kinds.ts';
import { sourceClaimOf } from '../../domain/values/carving.ts';
import type { ClaimRecord, PoolRecord } from '../../domain/objects/records.ts';
import { timestamp } from '../../domain/objects/objects.ts';
import { ConditionFailedError } from '../../store/client.ts';
import { objectKey } from '../../store/keys.ts';
import type { ClaimContext } from '../context.ts';

const ATTEMPTS = 5;

/** The prefixes a claim gives the pools carved from it: its value, while it holds one on an IPPrefixPool. */
export function prefixesOfClaim(claim: ClaimRecord | undefined): PoolRecord['carved'] | undefined {
  if (claim?.t !== 'claim' || claim.phase !== 'Allocated' || claim.status.value === undefined)
    return undefined;
  if (claim.spec.poolRef.kind !== 'IPPrefixPool') return undefined;
  return { prefixes: [claim.status.value], since: timestamp(), claimUid: claim.metadata.uid };
}

export async function readSourceClaim(ctx: ClaimContext, namespace: string, name: string) {
  const claim = await ctx.table.get<ClaimRecord>(objectKey(namespace, 'claims', name));
  return claim?.t === 'claim' ? claim : undefined;
}

/** Brings a carved pool's `carved` up to its claim's value (the stream function's repair). */
export async function refreshCarved(ctx: ClaimContext, namespace: string, resource: string, name: string) {
  const info = poolInfoByResource(resource);
  if (!info) return;
  const key = objectKey(namespace, info.resource, name);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const pool = await ctx.table.get<PoolRecord>(key);
    const from = pool?.t === 'pool' ? sourceClaimOf(pool.spec) : undefined;
    if (!pool || from === undefined) return;
    const carved = prefixesOfClaim(await readSourceClaim(ctx, namespace, from));
    if (JSON.stringify(carved?.prefixes ?? []) === JSON.stringify(pool.carved?.prefixes ?? [])) return;
    const { pk: _pk, sk: _sk, ...record } = pool;
    const next: PoolRecord = {
      ...record,
      metadata: { ...pool.metadata, generation: pool.metadata.generation + 1 },
      rv: pool.rv + 1,
    };
    if (carved) next.carved = carved;
    else delete next.carved;
    try {
      await ctx.table.replaceObject(key, next, pool.rv);
      return;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }
}

/** A claim settled (or changed): the pools carved from it follow its value. */
export async function claimValueChanged(ctx: ClaimContext, claim: ClaimRecord): Promise<void> {
  for (const carving of await ctx.table.carvings.of(claim.metadata.namespace, claim.metadata.name))
    await refreshCarved(ctx, claim.metadata.namespace, carving.resource, carving.pool);
}
