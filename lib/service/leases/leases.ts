/**
 * Leases (api.md, "Claim"; docs/leases.md). A lease's claim carries its end (`leaseExpiresAt`) and the
 * table's TTL attribute. DynamoDB's TTL deletes it some time after (days, at worst), so an expired claim
 * is treated as gone wherever it matters and deleted by whichever comes first: a read, a repeat PUT of
 * its name, the stream function about to bind it, the repair sweep, TTL. Every such delete is
 * conditional on the claim's uid and lease, so a claim renewed or made anew meanwhile is never taken;
 * the REMOVE is a release like any other (the stream applies the reclaim policy), and its event is
 * `Claim Expired` (domain/events.ts tells it from the lease's end and the record's time).
 */
import { leaseEnd, leaseExpired } from '../../domain/objects/leases.ts';
import type { ClaimRecord, ItemKey, QuarantineRecord } from '../../domain/objects/records.ts';
import type { Stored } from '../../store/items.ts';
import { LIST_SHARDS } from '../../store/keys.ts';
import { nowMs, nowText, type ClaimContext } from '../context.ts';
import { endQuarantine } from './quarantine.ts';

/** A lease's end for a claim made or renewed now; undefined for a claim without a lease. */
export function leaseFrom(ctx: ClaimContext, leaseSeconds: number | undefined): string | undefined {
  return leaseSeconds === undefined ? undefined : leaseEnd(nowMs(ctx), leaseSeconds);
}

/** Whether the claim's lease has ended by the context's clock. */
export function expiredNow(ctx: ClaimContext, claim: Pick<ClaimRecord, 'leaseExpiresAt'>): boolean {
  return leaseExpired(claim, nowMs(ctx));
}

/**
 * The claim as a reader may see it: undefined when it is not there or its lease ended, in which case
 * it is deleted now (conditionally: a claim renewed or replaced meanwhile stays).
 */
export async function liveClaim<T extends ClaimRecord | undefined>(
  ctx: ClaimContext,
  key: ItemKey,
  claim: T,
): Promise<T | undefined> {
  if (claim?.t !== 'claim' || !expiredNow(ctx, claim)) return claim;
  await expireClaim(ctx, key, claim);
  return undefined;
}

/** Deletes a claim whose lease ended; what was deleted, or undefined if it changed or went first. */
export function expireClaim(
  ctx: ClaimContext,
  key: ItemKey,
  claim: ClaimRecord,
): Promise<Stored<ClaimRecord> | undefined> {
  return ctx.table.deleteExpiredClaim(key, claim.metadata.uid, claim.leaseExpiresAt!, nowText(ctx));
}

/** Leases looked at per shard and run: a minute's expiries of a busy table, with room. */
const EXPIRY_PAGE = 200;

/**
 * The expiry run (every minute, deployed: the repair function's `expireLeases`): deletes the claims whose
 * lease ended and the quarantines whose time came (service/leases/quarantine.ts), both found by the leases index,
 * so that the 2-minute bound holds whatever TTL's delay. How many it deleted.
 */
export async function expireLeases(ctx: ClaimContext, page = EXPIRY_PAGE): Promise<number> {
  let expired = 0;
  for (let shard = 0; shard < LIST_SHARDS; shard++) {
    for (const key of await ctx.table.endedLeases(shard, nowText(ctx), page)) {
      const item = await ctx.table.get<ClaimRecord | QuarantineRecord>(key);
      if (item?.t === 'quarantine') {
        if (await endQuarantine(ctx, key, item)) expired++;
      } else if (item?.t === 'claim' && expiredNow(ctx, item) && (await expireClaim(ctx, key, item)))
        expired++;
    }
  }
  return expired;
}
