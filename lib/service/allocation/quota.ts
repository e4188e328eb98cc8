/**
 * A claim on a pool of another namespace (api.md, "Pools shared with other namespaces"): whether the pool
 * serves the claim's namespace, and its place among that namespace's holders of the pool, which is the
 * quota (store/quotas.ts). docs/races.md, "A shared pool's quota", has the argument.
 *
 * Each attempt to allocate a claim takes a place of its own (a token) right before it puts or binds a
 * value (not for a value it finds held, nor when it finds none), and gives it back unless it ends holding
 * a value; the claim's settle records the place it holds
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
  /** The most values the namespace may hold of the pool now. */
  max: number;
  /** Whether this attempt holds the place (it is taken only once a value is to be had: `ensurePlace`). */
  taken: boolean;
}

/** The quota refused the place: the claim waits `QuotaExceeded` (thrown out of the search, caught by decide). */
export class QuotaRefused extends Error {
  constructor() {
    super('the namespace holds the values of the pool it may');
  }
}

function sharedPoolId(pool: PoolRecord): PoolId {
  return { namespace: pool.metadata.namespace, kind: pool.kind, name: pool.metadata.name };
}

/** The place a claim's attempt would take in the pool, not yet taken; undefined: not shared with it. */
export function placeFor(claim: ClaimRecord, pool: PoolRecord): Place | undefined {
  const namespace = claim.metadata.namespace;
  const share = shareFor(pool, namespace);
  if (!share) return undefined;
  const token = newHolderToken(claim.metadata.name);
  return { pool: sharedPoolId(pool), namespace, token, max: share.maxAllocations, taken: false };
}

/**
 * Takes the place, right before the attempt puts or binds a value (never for an attempt that finds none:
 * a place taken and given back would refuse the namespace's other claims for that moment); throws
 * QuotaRefused when the namespace's places are all taken.
 */
export async function ensurePlace(ctx: ClaimContext, place: Place | undefined): Promise<void> {
  if (!place || place.taken) return;
  if (!(await ctx.table.quotas.take(place.pool, place.namespace, place.token, place.max)))
    throw new QuotaRefused();
  place.taken = true;
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
