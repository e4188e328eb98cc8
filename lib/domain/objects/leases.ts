/**
 * Leases (api.md, "Claim"): a claim with `spec.leaseSeconds` ends that long after it was made or last
 * renewed. An expired claim is gone wherever it matters, whether or not the table's TTL has deleted its
 * item yet (docs/leases.md). Pure: the caller passes now, read from the service's one clock.
 */
import { timestamp } from './objects.ts';
import type { ClaimRecord } from './records.ts';

/** When a lease of `seconds` taken at `nowMs` ends: RFC 3339 UTC, whole seconds (rounded up). */
export function leaseEnd(nowMs: number, seconds: number): string {
  return timestamp(Math.ceil(nowMs / 1000) * 1000 + seconds * 1000);
}

/** Whether the claim is a lease that has ended at `nowMs`. */
export function leaseExpired(claim: Pick<ClaimRecord, 'leaseExpiresAt'>, nowMs: number): boolean {
  return claim.leaseExpiresAt !== undefined && Date.parse(claim.leaseExpiresAt) <= nowMs;
}

/** Epoch seconds of a lease's end, as the table's TTL attribute holds it. */
export function leaseEpochSeconds(leaseExpiresAt: string): number {
  return Math.floor(Date.parse(leaseExpiresAt) / 1000);
}
