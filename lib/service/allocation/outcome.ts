/**
 * A claim asked for while it is being allocated (api.md, "Routes": no answer carries a claim still being
 * allocated): ten identical PUTs at once, a client's retry after a timeout, a GET. The request waits for
 * the allocating request's outcome, or finishes the allocation itself (service/allocation/decide.ts decides).
 */
import type { ClaimRecord, ItemKey } from '../../domain/objects/records.ts';
import type { ClaimContext } from '../context.ts';
import { takeOver } from './decide.ts';

/**
 * How long a request that finds its claim mid-allocation waits for that allocation's own handler before
 * it finishes the allocation itself: a live handler takes milliseconds; well inside the claim function's
 * timeout (10 s) and API Gateway's 30 s.
 */
export const CLAIM_WAIT_MS = 5_000;

/**
 * A claim that another request is allocating (ten identical PUTs at once, a client's retry, api.md
 * "Routes": no answer carries a claim still being allocated). Waits for that request's outcome, polling
 * with consistent reads and a backoff, for at most CLAIM_WAIT_MS and never past the handler's deadline;
 * a claim still allocating then is finished here, as the stream function would at the deadline (its
 * handler died, or is very slow). That is safe with the first handler still alive: both settles are
 * conditional on the claim's uid and on what it holds, the one that loses gives its allocation back, and
 * each answers the claim as settled (service/allocation/decide.ts, settle). Costs nothing when the claim is not
 * allocating. Undefined when the claim went meanwhile.
 */
/**
 * Whether a claim is mid-allocation as an answer would show it: `Allocating`, or `Waiting` with its
 * Allocated condition at `Allocating` (the stream function, or the repair sweep, unbound it from an object
 * that was deleted and is allocating it again: store/table.ts unbindClaim, then decide.ts reconcileClaim).
 * No answer carries either; it is waited for, or finished, like an allocation at work.
 */
export function midAllocation(claim: ClaimRecord | undefined): claim is ClaimRecord {
  if (claim?.phase === 'Allocating') return true;
  return claim?.phase === 'Waiting' && claim.status?.conditions?.[0]?.reason === 'Allocating';
}

export async function allocationOutcome(
  ctx: ClaimContext,
  key: ItemKey,
  claim: ClaimRecord,
): Promise<ClaimRecord | undefined> {
  const giveUpAt = Date.now() + CLAIM_WAIT_MS;
  let current: ClaimRecord | undefined = claim;
  let delay = 10;
  let tookOver: string | undefined;
  while (midAllocation(current)) {
    const deadline = current.allocatingUntil ? Date.parse(current.allocatingUntil) : 0;
    // Once per claim: a takeover that finds it recreated (another uid, allocating) waits for that one.
    if (tookOver !== current.metadata.uid && Date.now() >= Math.min(deadline, giveUpAt)) {
      tookOver = current.metadata.uid;
      current = await takeOver(ctx, key, current);
      continue;
    }
    // Given up only after a takeover of this claim: a clock that jumps past both waits at once (a
    // paused instance, a test's clock) still finishes the allocation rather than answer it unfinished.
    if (Date.now() >= giveUpAt + CLAIM_WAIT_MS) break;
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 250);
    const read = await ctx.table.get<ClaimRecord>(key);
    current = read?.t === 'claim' ? read : undefined;
  }
  return current;
}
