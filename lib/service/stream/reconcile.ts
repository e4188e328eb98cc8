/**
 * What the stream function repairs and keeps current (after Kubernetes' repairip.go). The record kinds
 * that do it are in lib/service/stream/ (claims.ts, allocations.ts, holds.ts, pools.ts; batch.ts runs a
 * batch of them); this file keeps what they share, and the repair sweep with them (reclaim, the pool
 * refresh). Every case decides on the state as it is (a consistent read, the batch's or its own) or finds
 * from the records' images that there is nothing to do, and writes conditionally, so it is safe to run
 * twice, late, or out of order.
 *
 *   record                         what it means                         what is done
 *   claim removed                  a release                             the reclaim policy, if the claim's
 *                                                                        allocation still names its uid
 *                                                                        (Recycle: delete; Retain: clear the
 *                                                                        uid, keep the name, offer it back)
 *   claim inserted/changed,        a handler died while allocating,      allocate it now
 *     still Allocating/Waiting     or it waits
 *   allocation inserted/changed,   a claim's put landed (maybe its       settle that claim with it
 *     naming a live claim's uid    handler died before settling)
 *                                  a duplicate from a lost race          give it back
 *   allocation naming a gone       a claim released or recreated         the reclaim policy (server-made
 *     claim's uid                  while its handler was at work         allocations only)
 *   allocation naming a claim,     pre-provisioned or retained           bind it to that claim if it waits;
 *     uid empty or stale           (allow-binding)                       offer it to the name otherwise
 *                                                                        (a stale uid is cleared first)
 *   allocation removed             a value freed; a bound claim lost     the claim allocates again
 *                                  its allocation object
 *   claim settled on an object     the object went before the settle     the claim allocates again
 *     that is gone                 landed
 *   pool inserted, spec changed    claims may fit now                    recount, wake waiting claims
 *   pool removed                   its waiting claims wait for it to     wake them (they say PoolNotFound)
 *                                  exist again
 *   allocation inserted/removed    counts and hint moved                 the batch's slot changes go to
 *                                                                        the pool's counts (lib/service/counts/tally.ts);
 *                                                                        wake waiters after a removal
 *   name hold inserted/changed     a pre-provision holds a name          wait for its request until its
 *                                  (service/allocation/name-holds.ts)               deadline; then confirm it or, with
 *                                                                        no object, delete it; counts
 *   user's object with a held      its create lost its hold and never    delete the object
 *     name, without its hold       answered 201
 *   user's object removed          its name goes with it                 delete its name hold
 */
import { poolIdOf, reconcileClaim } from '../allocation/decide.ts';
import { claimNamespaceOf } from '../../domain/objects/sharing.ts';
import { poolKindInfo, type PoolKind } from '../../domain/kinds.ts';
import type { AllocationRecord, ClaimRecord, ItemKey, PoolRecord } from '../../domain/objects/records.ts';
import { tallyPool, type Known, type SlotChange } from '../counts/tally.ts';
import { objectKey, poolKeyOf, type PoolId } from '../../store/keys.ts';
import { type ClaimContext } from '../context.ts';

export type { ChangeRecord } from './records.ts';

/** How many waiting claims one pool refresh tries at most; the allocations it makes trigger the next. */
const WAKE_LIMIT = 100;

/**
 * How long past a claim's deadline the REMOVE of an object waits for the claim, still Allocating, to
 * settle (stream/allocations.ts): the claim's own record need not then check a settle made before the
 * deadline (stream/claims.ts). Covers the record times' rounding and the clocks of the handler, the
 * stream function and DynamoDB.
 */
export const SETTLE_MARGIN_MS = 2000;

export function poolIdOfAllocation(allocation: AllocationRecord): PoolId {
  return {
    namespace: allocation.metadata.namespace,
    kind: allocation.spec.poolRef.kind as PoolKind,
    name: allocation.spec.poolRef.name,
  };
}

export function claimKeyOf(namespace: string, name: string): ItemKey {
  return objectKey(namespace, 'claims', name);
}

/**
 * Applies the pool's reclaim policy to an allocation whose claim went; true when this call changed it.
 * `readPool`: how the pool is read (the stream function's batch has read it already).
 */
export async function reclaim(
  ctx: ClaimContext,
  key: ItemKey,
  allocation: AllocationRecord,
  readPool: (key: ItemKey) => Promise<PoolRecord | undefined> = (poolKey) =>
    ctx.table.get<PoolRecord>(poolKey),
): Promise<boolean> {
  const ref = allocation.spec.claimRef!;
  const pool = await readPool(poolKeyOf(poolIdOfAllocation(allocation)));
  if (pool?.t === 'pool' && pool.spec.reclaimPolicy === 'Retain') {
    // Retain keeps the value and the claim's name but clears the uid: a claim recreated under that name
    // may rebind through allow-binding (the seed document's promise); nobody else can take the value.
    if (!(await ctx.table.setAllocationUid(key, ref.name, ref.uid, ''))) return false;
    await ctx.table.offerToClaim(claimKeyOf(claimNamespaceOf(allocation), ref.name), key);
  } else if (!(await ctx.table.deleteBoundAllocation(key, ref.name, ref.uid))) return false;
  // The place its claim's attempt took, if a shared pool's: nobody holds the object for that claim now.
  if (allocation.holder !== undefined)
    await ctx.table.quotas.give(
      poolIdOfAllocation(allocation),
      claimNamespaceOf(allocation),
      allocation.holder,
    );
  return true;
}

/** Gives back the place a shared pool's claim held among its namespace's holders (store/quotas.ts). */
export async function giveHolderBack(ctx: ClaimContext, claim: ClaimRecord): Promise<void> {
  if (claim.holder === undefined) return;
  await ctx.table.quotas.give(poolIdOf(claim), claim.metadata.namespace, claim.holder);
}

/**
 * Brings a pool's counts up to date with a batch's slot changes (lib/service/counts/tally.ts: cost by the blocks the
 * batch touched, not by the pool) and wakes the claims that wait for it when values were freed. `known`:
 * what the batch already read of the pool and its summaries.
 */
export async function refreshPool(
  ctx: ClaimContext,
  id: PoolId,
  changes: readonly SlotChange[] = [],
  options: { recount?: boolean; removed?: boolean } = {},
  known: Known = {},
): Promise<void> {
  if (!poolKindInfo(id.kind)) return;
  const result = await tallyPool(ctx, id, changes, options, known);
  if (result === 'no pool') {
    // Claims that waited for a value of a pool now gone say so: they wait for it to exist.
    if (options.removed) await wakeWaiting(ctx, id);
    return;
  }
  // Only a freed value, a new pool or a new spec changes what a waiting claim gets (a claim that found
  // nothing because the summary still showed a freed value as held is woken when the stream applies that
  // removal). An exhausted pool still wakes them then: claims that waited for it to exist must learn
  // that it is exhausted instead.
  if (!result.freed) return;
  await wakeWaiting(ctx, id);
}

/** Allocates (or re-decides) the claims that wait for a pool, oldest first. */
export async function wakeWaiting(ctx: ClaimContext, id: PoolId): Promise<void> {
  for (const waiting of await ctx.table.waitingClaims(id, WAKE_LIMIT)) await reconcileClaim(ctx, waiting);
}
