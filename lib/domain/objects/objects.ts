/** The API shape of every object (api.md, "Objects"), made from what the table stores. Pure. */
import { API_VERSION, poolInfoByAllocationKind, type AllocationKind } from '../kinds.ts';
import type { AllocationRecord, ClaimRecord, Condition, PoolRecord } from './records.ts';
import { ownSpecChecker, poolSpecChecker, valueKind } from '../values/spaces.ts';
import { carvedSpace, sourceClaimOf } from '../values/carving.ts';
import type { PoolSpace } from '../values/values.ts';
import type { Metadata } from './validation.ts';

/** Now (or the time `ms`, epoch ms), as objects carry times: UTC, whole seconds (`2026-11-29T12:00:00Z`). */
export function timestamp(ms?: number): string {
  return (ms === undefined ? new Date() : new Date(ms)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export type ApiObject = Record<string, unknown>;

function metadataOut(metadata: Metadata): Metadata {
  return {
    name: metadata.name,
    namespace: metadata.namespace,
    uid: metadata.uid,
    generation: metadata.generation,
    creationTimestamp: metadata.creationTimestamp,
    labels: metadata.labels ?? {},
    annotations: metadata.annotations ?? {},
  };
}

/** The pool's candidate space; its spec was checked when it was written, so this cannot fail. */
export function spaceOf(pool: PoolRecord): PoolSpace {
  // A carved pool: its claim's value as its prefixes, once the pool record carries it.
  if (pool.spec.prefixesFrom !== undefined)
    return carvedSpace(pool.kind, ownSpecChecker(pool.kind), pool.spec, pool.carved?.prefixes);
  const checked = poolSpecChecker(pool.kind)(pool.spec);
  if ('causes' in checked)
    throw new Error(`stored spec of ${pool.kind} ${pool.metadata.name} no longer checks`);
  return checked.space;
}

export function poolObject(pool: PoolRecord, space: PoolSpace = spaceOf(pool)): ApiObject {
  const counts = pool.counts;
  const held = BigInt(counts?.held ?? '0');
  const free = space.total > held ? space.total - held : 0n;
  const available: Condition =
    free > 0n
      ? {
          type: 'Available',
          status: 'True',
          reason: 'HasCapacity',
          message: `${free} of ${space.total} candidates are free`,
          lastTransitionTime: counts?.availableSince ?? pool.metadata.creationTimestamp,
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'Exhausted',
          message: `all ${space.total} candidates are held`,
          lastTransitionTime: counts?.availableSince ?? pool.metadata.creationTimestamp,
        };
  const carved = pool.spec.prefixesFrom !== undefined;
  const pending = carved && !pool.carved?.prefixes.length;
  const from = sourceClaimOf(pool.spec);
  return {
    apiVersion: API_VERSION,
    kind: pool.kind,
    metadata: metadataOut(pool.metadata),
    spec: pool.spec,
    status: {
      allocated: counts?.allocated ?? 0,
      total: space.total.toString(),
      free: free.toString(),
      // Shown for a pool that quarantines, or still holds values back from before a change.
      ...((Number(pool.spec.quarantineSeconds ?? 0) > 0 || (counts?.quarantined ?? '0') !== '0') && {
        quarantined: counts?.quarantined ?? '0',
      }),
      conditions: [
        pending
          ? {
              type: 'Available',
              status: 'False',
              reason: 'ClaimPending',
              message: `claim ${from} holds no value yet: the pool has no candidates until it does`,
              lastTransitionTime: pool.carved?.since ?? pool.metadata.creationTimestamp,
            }
          : available,
      ],
      ...(carved ? { prefixes: pool.carved?.prefixes ?? [] } : {}),
    },
  };
}

export function claimObject(claim: ClaimRecord): ApiObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Claim',
    metadata: metadataOut(claim.metadata),
    spec: claim.spec,
    status: claim.leaseExpiresAt ? { ...claim.status, leaseExpiresAt: claim.leaseExpiresAt } : claim.status,
  };
}

/**
 * An allocation object, with its `Valid` condition made from the pool as it is now, so it is always
 * current (no write per allocation when a pool's spec changes).
 */
export function allocationObject(allocation: AllocationRecord, pool: PoolRecord | undefined): ApiObject {
  const info = poolInfoByAllocationKind(allocation.kind)!;
  const value = valueKind(allocation.kind).parse(
    allocation.kind === 'Index' ? allocation.value : allocation.value,
  );
  const spec: Record<string, unknown> = { poolRef: allocation.spec.poolRef };
  if (value.ok) spec[info.valueField] = valueKind(allocation.kind).specValue(value.value);
  if (allocation.spec.claimRef) spec.claimRef = allocation.spec.claimRef;
  if (allocation.spec.owner) spec.owner = allocation.spec.owner;
  return {
    apiVersion: API_VERSION,
    kind: allocation.kind,
    metadata: metadataOut(allocation.metadata),
    spec,
    status: { conditions: [validCondition(allocation, pool)] },
  };
}

export function validCondition(allocation: AllocationRecord, pool: PoolRecord | undefined): Condition {
  const since = allocation.metadata.creationTimestamp;
  if (!pool || pool.metadata.uid === undefined) {
    return condition(
      'Valid',
      'False',
      'PoolNotFound',
      `pool ${allocation.spec.poolRef.name} does not exist`,
      since,
    );
  }
  const space = spaceOf(pool);
  const value = valueKind(allocation.kind).parse(allocation.value);
  const inRange = value.ok && space.fits(value.value) && containsValue(space, value.value.slot);
  const time = later(since, pool.metadata.creationTimestamp);
  return inRange
    ? condition(
        'Valid',
        'True',
        'ValueInRange',
        `${allocation.value} is a candidate of ${pool.metadata.name}`,
        time,
      )
    : condition(
        'Valid',
        'False',
        'ValueOutOfRange',
        `${allocation.value} is not a candidate of ${pool.metadata.name}`,
        time,
      );
}

function containsValue(space: PoolSpace, slot: bigint): boolean {
  return space.segments.some((segment) => segment.first <= slot && slot <= segment.last);
}

function later(a: string, b: string): string {
  return a > b ? a : b;
}

export function condition(
  type: string,
  status: Condition['status'],
  reason: string,
  message: string,
  lastTransitionTime: string,
): Condition {
  return { type, status, reason, message, lastTransitionTime };
}

export function allocationRefOf(kind: AllocationKind, name: string) {
  return { apiVersion: API_VERSION, kind, name };
}
