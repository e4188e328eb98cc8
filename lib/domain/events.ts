/**
 * Domain events (docs/events.md), derived from the table's stream records alone: a pure function of each
 * record's old and new images, so the same record replayed (retries, bisected batches) yields the same
 * events with the same ids, and consumers drop duplicates by `detail.eventId`. Publishing is a port
 * (`EventSink`): EventBridge when deployed, a JSON Lines file or memory locally. Plain data, no AWS.
 *
 *   record                                          event
 *   claim: Allocating/Waiting → Allocated           Claim Allocated
 *   claim: → Waiting, or Waiting with a new reason  Claim Pending (reason: PoolNotFound, PoolExhausted,
 *                                                   ValueTaken, ValueQuarantined)
 *   claim removed                                   Claim Released (with the value it held, if any)
 *   claim removed once its lease ended (by TTL, or  Claim Expired (the same, and when the lease ended)
 *     by whichever reader found it expired first)
 *   allocation: claimRef.uid set → cleared          Allocation Reclaimed (Retain)
 *   allocation made by a claim, removed while it    Allocation Reclaimed (Recycle)
 *     still named that claim's uid
 *   pool counts: available → not available          Pool Exhausted
 *   pool counts: not available → available          Pool Available
 */
import { createHash } from 'node:crypto';
import type { AllocationKind, PoolKind } from './kinds.ts';
import { spaceOf } from './objects/objects.ts';
import type { AllocationRecord, ClaimRecord, Condition, PoolRecord } from './objects/records.ts';

/** `source` of every event Allot publishes. */
export const EVENT_SOURCE = 'allot';

/** Detail types of the requests Allot takes from an event bus (`lib/service/requests/invocation.ts`). */
export const CLAIM_REQUESTED = 'Allot Claim Requested';
export const RELEASE_REQUESTED = 'Allot Release Requested';

export const DETAIL_TYPES = [
  'Claim Allocated',
  'Claim Pending',
  'Claim Released',
  'Claim Expired',
  'Allocation Reclaimed',
  'Pool Exhausted',
  'Pool Available',
] as const;
export type DetailType = (typeof DETAIL_TYPES)[number];

export interface ClaimId {
  name: string;
  uid: string;
  /** A claim of another namespace than the event's (a shared pool's object): the claim's own. */
  namespace?: string;
}
export interface PoolRef {
  kind: string;
  name: string;
}

interface Base {
  /** Deterministic: the same change always has the same id. */
  eventId: string;
  namespace: string;
  /** When the change happened (from the record, not from the publisher's clock). */
  time: string;
}

export interface ClaimAllocatedDetail extends Base {
  claim: ClaimId;
  pool: PoolRef;
  value: string;
  allocationRef: { kind: AllocationKind; name: string };
}
export interface ClaimPendingDetail extends Base {
  claim: ClaimId;
  pool: PoolRef;
  reason: string;
  message: string;
}
export interface ClaimReleasedDetail extends Base {
  claim: ClaimId;
  pool: PoolRef;
  value?: string;
}
export interface ClaimExpiredDetail extends ClaimReleasedDetail {
  leaseExpiresAt: string;
}
export interface AllocationReclaimedDetail extends Base {
  allocation: { kind: AllocationKind; name: string; uid: string };
  pool: PoolRef;
  value: string;
  claim: ClaimId;
  reclaimPolicy: 'Recycle' | 'Retain';
}
export interface PoolCapacityDetail extends Base {
  pool: PoolRef & { uid: string };
  allocated: number;
  /** Decimal strings: a /64 pool holds 2^64 candidates. */
  total: string;
  free: string;
}

export interface DetailOf {
  'Claim Allocated': ClaimAllocatedDetail;
  'Claim Pending': ClaimPendingDetail;
  'Claim Released': ClaimReleasedDetail;
  'Claim Expired': ClaimExpiredDetail;
  'Allocation Reclaimed': AllocationReclaimedDetail;
  'Pool Exhausted': PoolCapacityDetail;
  'Pool Available': PoolCapacityDetail;
}

export type AllotEvent = {
  [T in DetailType]: { source: typeof EVENT_SOURCE; detailType: T; detail: DetailOf[T] };
}[DetailType];

/** One stream record, unmarshalled: the shape `lib/service/stream/reconcile.ts` takes, plus when it was written. */
export interface StreamChange {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  oldImage?: Record<string, unknown>;
  newImage?: Record<string, unknown>;
  /** The record's ApproximateCreationDateTime, ISO 8601. */
  recordedAt: string;
  /** A REMOVE made by DynamoDB's TTL (the record's userIdentity is its service principal). */
  byTtl?: boolean;
}

/** A stream record's `userIdentity` when DynamoDB's TTL deleted the item. */
export const TTL_IDENTITY = { type: 'Service', principalId: 'dynamodb.amazonaws.com' } as const;

/**
 * Whether a claim's removal was its lease's end: TTL's delete, or one made after the end (every delete
 * of ours then is an expiry: a DELETE finds the claim gone already, service/leases/leases.ts). The record's
 * time is whole seconds rounded down, hence the second allowed.
 */
export function removalExpired(claim: ClaimRecord, change: StreamChange): boolean {
  if (claim.leaseExpiresAt === undefined) return false;
  return change.byTtl === true || Date.parse(claim.leaseExpiresAt) <= Date.parse(change.recordedAt) + 1000;
}

/** Where events go: EventBridge when deployed, a file or memory locally. */
export interface EventSink {
  publish(events: readonly AllotEvent[]): Promise<void>;
}

/** The id of a change: a hash of its detail type and what makes that change unique. */
export function eventId(detailType: DetailType, ...parts: string[]): string {
  return createHash('sha256')
    .update([detailType, ...parts].join('\u0000'))
    .digest('hex')
    .slice(0, 32);
}

function event<T extends DetailType>(detailType: T, detail: DetailOf[T]): AllotEvent {
  return { source: EVENT_SOURCE, detailType, detail } as AllotEvent;
}

const allocatedCondition = (claim: ClaimRecord): Condition | undefined =>
  claim.status?.conditions?.find((condition) => condition.type === 'Allocated');

const claimIdOf = (claim: ClaimRecord): ClaimId => ({ name: claim.metadata.name, uid: claim.metadata.uid });
const poolRefOf = (claim: ClaimRecord): PoolRef => ({
  kind: claim.spec.poolRef.kind,
  name: claim.spec.poolRef.name,
});

function claimEvents(change: StreamChange): AllotEvent[] {
  const before = change.oldImage?.t === 'claim' ? (change.oldImage as unknown as ClaimRecord) : undefined;
  const after = change.newImage?.t === 'claim' ? (change.newImage as unknown as ClaimRecord) : undefined;
  if (change.eventName === 'REMOVE') {
    if (!before) return [];
    const { uid } = before.metadata;
    const released = {
      namespace: before.metadata.namespace,
      time: change.recordedAt,
      claim: claimIdOf(before),
      pool: poolRefOf(before),
      ...(before.phase === 'Allocated' && before.status.value !== undefined
        ? { value: before.status.value }
        : {}),
    };
    if (removalExpired(before, change))
      return [
        event('Claim Expired', {
          eventId: eventId('Claim Expired', uid),
          ...released,
          leaseExpiresAt: before.leaseExpiresAt!,
        }),
      ];
    return [event('Claim Released', { eventId: eventId('Claim Released', uid), ...released })];
  }
  if (!after) return [];
  const condition = allocatedCondition(after);
  if (!condition) return [];
  const { uid, namespace } = after.metadata;
  // A new claim over an older one of the same name is a new claim: compare only with the same uid.
  const previous = before?.metadata.uid === uid ? before : undefined;
  if (after.phase === 'Allocated' && previous?.phase !== 'Allocated') {
    const { value, allocationRef } = after.status;
    if (value === undefined || !allocationRef) return [];
    return [
      event('Claim Allocated', {
        eventId: eventId('Claim Allocated', uid, String(after.rv)),
        namespace,
        time: condition.lastTransitionTime,
        claim: claimIdOf(after),
        pool: poolRefOf(after),
        value,
        allocationRef: { kind: allocationRef.kind, name: allocationRef.name },
      }),
    ];
  }
  if (
    after.phase === 'Waiting' &&
    (previous?.phase !== 'Waiting' || allocatedCondition(previous)?.reason !== condition.reason)
  ) {
    return [
      event('Claim Pending', {
        eventId: eventId('Claim Pending', uid, String(after.rv)),
        namespace,
        time: condition.lastTransitionTime,
        claim: claimIdOf(after),
        pool: poolRefOf(after),
        reason: condition.reason,
        message: condition.message,
      }),
    ];
  }
  return [];
}

function reclaimed(
  allocation: AllocationRecord,
  claim: ClaimId,
  reclaimPolicy: 'Recycle' | 'Retain',
  time: string,
): AllotEvent {
  const { metadata } = allocation;
  return event('Allocation Reclaimed', {
    eventId: eventId('Allocation Reclaimed', metadata.uid, claim.uid, reclaimPolicy),
    namespace: metadata.namespace,
    time,
    allocation: { kind: allocation.kind, name: metadata.name, uid: metadata.uid },
    pool: { kind: allocation.spec.poolRef.kind, name: allocation.spec.poolRef.name },
    value: allocation.value,
    claim,
    reclaimPolicy,
  });
}

function allocationEvents(change: StreamChange): AllotEvent[] {
  const before =
    change.oldImage?.t === 'alloc' ? (change.oldImage as unknown as AllocationRecord) : undefined;
  const after = change.newImage?.t === 'alloc' ? (change.newImage as unknown as AllocationRecord) : undefined;
  const held = before?.spec.claimRef;
  if (!before || !held?.uid) return [];
  if (change.eventName === 'REMOVE') {
    // Only server-made objects are recycled; a user's pre-provisioned object going is a user's delete.
    return before.origin === 'claim' ? [reclaimed(before, held, 'Recycle', change.recordedAt)] : [];
  }
  const now = after?.spec.claimRef;
  if (after && now?.name === held.name && now.uid === '' && after.metadata.uid === before.metadata.uid)
    return [reclaimed(before, held, 'Retain', change.recordedAt)];
  return [];
}

function poolEvents(change: StreamChange): AllotEvent[] {
  const after = change.newImage?.t === 'pool' ? (change.newImage as unknown as PoolRecord) : undefined;
  const before = change.oldImage?.t === 'pool' ? (change.oldImage as unknown as PoolRecord) : undefined;
  const counts = after?.counts;
  if (!after || counts?.available === undefined) return [];
  const was = before?.metadata.uid === after.metadata.uid ? before.counts?.available : undefined;
  // A new pool starts available: only a change of state is news.
  const detailType: DetailType | undefined =
    counts.available === false && was !== false
      ? 'Pool Exhausted'
      : counts.available === true && was === false
        ? 'Pool Available'
        : undefined;
  if (!detailType) return [];
  const { metadata } = after;
  const since = counts.availableSince ?? counts.updatedAt;
  // The revision is unique per counts write (times are whole seconds: a pool may flip twice in one).
  const total = totalOf(after);
  const held = BigInt(counts.held);
  return [
    event(detailType, {
      eventId: eventId(detailType, metadata.uid, counts.revision),
      namespace: metadata.namespace,
      time: since,
      pool: { kind: after.kind, name: metadata.name, uid: metadata.uid },
      allocated: counts.allocated,
      total: total.toString(),
      free: (total > held ? total - held : 0n).toString(),
    }),
  ];
}

function totalOf(pool: PoolRecord): bigint {
  try {
    return spaceOf(pool).total;
  } catch {
    return BigInt(pool.counts?.held ?? '0');
  }
}

/** The events a batch of stream records means, in record order. */
export function deriveEvents(changes: readonly StreamChange[]): AllotEvent[] {
  const events: AllotEvent[] = [];
  for (const change of changes) {
    const type = (change.newImage ?? change.oldImage)?.t;
    if (type === 'claim' || change.oldImage?.t === 'claim') events.push(...claimEvents(change));
    else if (type === 'alloc') events.push(...allocationEvents(change));
    else if (type === 'pool') events.push(...poolEvents(change));
  }
  return events;
}

/** A pool's share of candidates held, when a record changed it. */
export interface PoolUtilisation {
  namespace: string;
  pool: PoolRef;
  /** Percent, 0–100, two decimals. */
  percent: number;
}

/** Utilisation of each pool whose held count a record changed (the last per pool in the batch). */
export function poolUtilisations(changes: readonly StreamChange[]): PoolUtilisation[] {
  const latest = new Map<string, PoolUtilisation>();
  for (const change of changes) {
    const after = change.newImage?.t === 'pool' ? (change.newImage as unknown as PoolRecord) : undefined;
    const before = change.oldImage as unknown as PoolRecord | undefined;
    if (!after?.counts || before?.counts?.held === after.counts.held) continue;
    const total = totalOf(after);
    const held = BigInt(after.counts.held);
    const percent = total === 0n ? 100 : Number((held * 10_000n) / total) / 100;
    const { namespace, name } = after.metadata;
    latest.set(`${namespace}\u0000${after.kind}\u0000${name}`, {
      namespace,
      pool: { kind: after.kind satisfies PoolKind, name },
      percent,
    });
  }
  return [...latest.values()];
}

/** How old each claim-removal record was when handled, in ms: how late reclaim policy is applied. */
export function reclaimAges(changes: readonly StreamChange[], now: number): number[] {
  return changes
    .filter((change) => change.eventName === 'REMOVE' && change.oldImage?.t === 'claim')
    .map((change) => Math.max(0, now - Date.parse(change.recordedAt)));
}
