/**
 * A claim on a pool of another namespace (api.md, "Pools shared with other namespaces"): whether the pool
 * serves the claim's namespace, and its place among that namespace's holders of the pool, which is the
 * quota (store/quotas.ts). docs/races.md, "A shared pool's quota", has the argument.
 *
 * Each attempt to allocate a claim takes a place of its own (a token) before it puts or binds anything,
 * and gives it back unless it ends holding a value; the claim's settle records the place it holds
 * (`ClaimRecord.holder`). So two actors at work on one claim never give back each other's place, a
 * namespace never holds more values than places, and a place left by an attempt that died is found by
 * the repair sweep (service/repair/holders.ts): no claim records it.
 */
import type { ClaimRecord, PoolRecord } from '../../domain/objects/records.ts';
import {
  newHolderToken,
  shareFor,
  sharingStatus,
  type NamespaceUsage,
} from '../../domain/objects/sharing.ts';
import type { PoolId } from '../../store/keys.ts';
import type { ClaimContext } from '../context.ts';

export interface Place {
  pool: PoolId;
  namespace: string;
  token: string;
}

function sharedPoolId(pool: PoolRecord): PoolId {
  return { namespace: pool.metadata.namespace, kind: pool.kind, name: pool.metadata.name };
}

/** A place for the claim among its namespace's holders of the pool, or why there is none. */
export async function takePlace(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
): Promise<Place | 'not shared' | 'quota used up'> {
  const namespace = claim.metadata.namespace;
  const share = shareFor(pool, namespace);
  if (!share) return 'not shared';
  const place = { pool: sharedPoolId(pool), namespace, token: newHolderToken(claim.metadata.name) };
  const taken = await ctx.table.quotas.take(place.pool, namespace, place.token, share.maxAllocations);
  return taken ? place : 'quota used up';
}

export function givePlace(ctx: ClaimContext, place: Place): Promise<void> {
  return ctx.table.quotas.give(place.pool, place.namespace, place.token);
}

export function quotaMessage(claim: ClaimRecord, pool: PoolRecord): string {
  const share = shareFor(pool, claim.metadata.namespace);
  return `namespace ${claim.metadata.namespace} holds the ${share?.maxAllocations ?? 0} values of ${pool.kind} ${pool.metadata.name} it may (maxAllocations)`;
}

/**
 * A pool's `status.sharing`, read at once from its holders (one Query): for a pool that says whom it is
 * shared with (an empty list too: its tenants may still hold values); undefined for any other.
 */
export async function sharingOf(ctx: ClaimContext, pool: PoolRecord): Promise<NamespaceUsage[] | undefined> {
  if (pool.spec.sharedWith === undefined) return undefined;
  const holders = await ctx.table.quotas.of(sharedPoolId(pool));
  return sharingStatus(
    pool,
    holders.map((entry) => ({ namespace: entry.namespace, count: entry.holders.length })),
  );
}
