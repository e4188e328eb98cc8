/**
 * A shared pool's holders (store/quotas.ts; service/allocation/quota.ts), swept with the pool:
 *
 *   found                                              fixed by                            kind
 *   a place no claim holds, older than the grace       giving it back, and waking the      lostHolder
 *     period (its attempt died between the place and   claims that wait for the pool
 *     the object, or its give-back was lost)
 *   a claim waiting QuotaExceeded, or PoolNotFound     allocating it (reconcileClaim)      waitingClaim
 *     although the pool is shared with it, while its
 *     namespace holds fewer than its limit
 *
 * A place is held when the claim its token names records it (`ClaimRecord.holder`), which its settle
 * writes. A place a claim's attempt took a moment ago is not yet recorded: the grace period (longer than
 * any handler runs) leaves it alone. Should the stream function settle a claim on an object whose place
 * was given back meanwhile, it takes the place again first (stream/allocations.ts), within the limit.
 */
import type { ClaimRecord } from '../../domain/objects/records.ts';
import { parseHolderToken, shareFor } from '../../domain/objects/sharing.ts';
import { objectKey } from '../../store/keys.ts';
import { wakeWaiting } from '../stream/reconcile.ts';
import { claimItem, fix, forgetClaim, spend, type Sweep } from './state.ts';
import type { PoolWalk } from './walk.ts';

async function holdersOf(sweep: Sweep, walk: PoolWalk): Promise<Map<string, string[]>> {
  if (!walk.holders) {
    spend(sweep);
    const found = await sweep.ctx.table.quotas.of(walk.id);
    walk.holders = new Map(found.map((entry) => [entry.namespace, entry.holders]));
  }
  return walk.holders;
}

/** Whether a waiting claim of another namespace may hold one more value of the pool. */
export async function mayHoldMore(sweep: Sweep, walk: PoolWalk, claim: ClaimRecord): Promise<boolean> {
  const share = shareFor(walk.pool, claim.metadata.namespace);
  if (!share) return claim.status.conditions[0]?.reason !== 'PoolNotFound';
  const holders = (await holdersOf(sweep, walk)).get(claim.metadata.namespace) ?? [];
  return holders.length < share.maxAllocations;
}

/** Gives back the places no claim holds (see the top of the file). */
export async function checkHolders(sweep: Sweep, walk: PoolWalk): Promise<void> {
  const { ctx } = sweep;
  let gaveBack = false;
  for (const [namespace, tokens] of await holdersOf(sweep, walk)) {
    for (const token of tokens) {
      const parsed = parseHolderToken(token);
      if (parsed && Date.now() - parsed.takenAt < sweep.graceMs) continue;
      const item = parsed ? await claimItem(sweep, parsed.claimName, namespace) : undefined;
      if (item?.t === 'claim' && item.holder === token) continue;
      await fix(sweep, 'lostHolder', async () => {
        forgetClaim(sweep, objectKey(namespace, 'claims', parsed?.claimName ?? ''));
        await ctx.table.quotas.give(walk.id, namespace, token);
        gaveBack = true;
        return true;
      });
    }
  }
  if (gaveBack) await wakeWaiting(ctx, walk.id);
}
