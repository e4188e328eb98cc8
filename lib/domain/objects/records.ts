/**
 * What Allot stores: one record type per object kind, as table.ts writes it. Plain data, no AWS.
 * The API shape (api.md) is made from these in objects.ts.
 */
import type { AllocationKind, PoolKind } from '../kinds.ts';
import type { Metadata, ObjectRef, OwnerRef } from './validation.ts';

export interface ItemKey {
  pk: string;
  sk: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface PoolCounts {
  /** Allocation objects that reference the pool. */
  allocated: number;
  /** Those whose value is a candidate of the current spec, as a decimal string (free = total − held). */
  held: string;
  /** Values held back by a quarantine (QuarantineRecord), as a decimal string: part of `held`. */
  quarantined?: string;
  /** Lowest position in candidate order that may be free; where a claim starts looking. */
  searchFrom: string;
  /** The pool generation the counts were made for. */
  generation: number;
  updatedAt: string;
  /** Unique per counts write. */
  revision: string;
  /**
   * Changes only when values may have been freed (an allocation object removed, the spec changed): what a
   * claim handler's search memory is keyed on, so the memory survives recounts that only saw claims.
   */
  epoch?: string;
  /**
   * Markers (block-summary slot changes, lib/service/counts/tally.ts) these counts already hold, by id → when (epoch
   * seconds): a marker is applied once, however often its records are delivered.
   */
  applied?: Record<string, number>;
  /** Until when claims spread their searches: the stream saw an allocation made after a lost race. */
  contendedUntil?: string;
  /** When the Available condition last changed. */
  availableSince?: string;
  available?: boolean;
}

export interface PoolRecord {
  t: 'pool';
  kind: PoolKind;
  metadata: Metadata;
  /** Canonical spec, `reclaimPolicy` included. */
  spec: Record<string, unknown> & { reclaimPolicy: 'Recycle' | 'Retain' };
  counts?: PoolCounts;
  /**
   * A pool carved from a claim (`spec.prefixesFrom`): that claim's value as its prefixes, once it holds
   * one, and since when (service/allocation/carving.ts writes it).
   */
  carved?: { prefixes: string[]; since: string; claimUid: string };
  /**
   * A cascade is deleting it (since when): to claims it is gone already, so a claim of another namespace
   * that the cascade leaves waits for it rather than taking another of its values.
   */
  deleting?: string;
  /** Bumped on every write by a handler: replace and delete are conditional on it. */
  rv: number;
}

export type ClaimPhase = 'Allocating' | 'Waiting' | 'Allocated' | 'PoolRefInvalid';

export interface ClaimSpec {
  poolRef: ObjectRef;
  value?: string;
  within?: string;
  prefixLength?: number;
  reserved?: string[];
  owner?: OwnerRef;
  /** A lease: the claim ends this many seconds after it was made or last renewed (domain/objects/leases.ts). */
  leaseSeconds?: number;
}

export interface ClaimStatus {
  value?: string;
  /** `namespace`: the object is in the shared pool's namespace, not the claim's. */
  allocationRef?: { apiVersion: string; kind: AllocationKind; name: string; namespace?: string };
  conditions: Condition[];
}

export interface ClaimRecord {
  t: 'claim';
  metadata: Metadata;
  spec: ClaimSpec;
  status: ClaimStatus;
  phase: ClaimPhase;
  /** While `Allocating`: when its handler's time is up and the stream function may take over. */
  allocatingUntil?: string;
  /** The key of the allocation object the claim holds, while it holds one. */
  bound?: ItemKey;
  /**
   * A claim of a shared pool, while it holds a value: its place among its namespace's holders of that
   * pool (store/quotas.ts), given back when it holds the value no more.
   */
  holder?: string;
  /** Allocation objects offered to this claim's name (pre-provisioned or retained), as hints. */
  offers?: Record<string, ItemKey>;
  /**
   * A lease's end (RFC 3339 UTC, whole seconds), shown as `status.leaseExpiresAt`; kept beside the status,
   * which settles rewrite whole. The store keeps the table's TTL attribute in step with it.
   */
  leaseExpiresAt?: string;
  rv: number;
}

export interface AllocationSpecRecord {
  poolRef: ObjectRef;
  /** `namespace`: a claim of another namespace, on a shared pool (domain/objects/sharing.ts). */
  claimRef?: { name: string; uid: string; namespace?: string };
  owner?: OwnerRef;
}

export interface AllocationRecord {
  t: 'alloc';
  kind: AllocationKind;
  metadata: Metadata;
  spec: AllocationSpecRecord;
  /** Canonical value (the value field of the spec is made from it). */
  value: string;
  /**
   * A claim of a shared pool made it: the place among its namespace's holders its claim took first, so
   * whoever settles the claim on it (the stream function, when the handler died) records that place.
   */
  holder?: string;
  /** `claim` when a claim created it, `user` when it was pre-provisioned. */
  origin: 'claim' | 'user';
  /**
   * A claim took it after losing a race in the pool: the stream function tells every handler instance
   * (PoolCounts.contendedUntil), so they spread their searches too.
   */
  raced?: boolean;
  /**
   * A user's object of a pool of a range of prefix lengths, put but not yet checked for overlap: until
   * when (epoch ms) its handler may still be at work. After that the handler is gone, and the stream
   * function checks it on its behalf.
   */
  unchecked?: number;
  /**
   * A claim's object of a pool of a range of prefix lengths that a checker on its placer's behalf (the
   * stream function, the repair sweep) found free of overlap: kept, so no other checker takes it back.
   */
  kept?: boolean;
  /**
   * Pools of a range of prefix lengths: their longest length, so the stream function knows the run of
   * finest slots the prefix covers without reading the pool.
   */
  finest?: number;
  rv: number;
}

/**
 * One namespace's holders of one shared pool (store/quotas.ts): a place per claim of that namespace that
 * holds one of the pool's values, or is taking one. `size(holders) < maxAllocations` is the quota's
 * conditional write.
 */
export interface HoldersRecord {
  t: 'holders';
  holders?: Set<string>;
}

/** Offers of allocation objects to a claim name, kept under the claim's key until that claim exists. */
export interface ClaimStubRecord {
  t: 'stub';
  offers: Record<string, ItemKey>;
}

/**
 * A name hold (service/allocation/name-holds.ts): a user's allocation object is named like the deterministic name of
 * a value of another pool (`idx-1` for value 1 of pool `idx`), so this item sits at that value's
 * allocation key. Claims of that pool find the key taken, exactly as for a held value, and the name
 * cannot be given twice: one key, one item.
 */
export interface NameHoldRecord {
  t: 'hold';
  /** The kind of the object that holds the name. */
  kind: AllocationKind;
  /** The object's name (the one held), namespace and uid. */
  metadata: { name: string; namespace: string; uid: string };
  /** The pool and value the name stands for. */
  poolRef: { kind: PoolKind; name: string };
  value: string;
  /** Where the object that holds the name lives. */
  target: ItemKey;
  /**
   * `pending` from the hold's put until its object is put and the hold confirmed (`held`); a pending
   * hold whose `until` has passed was left by a request that died, and is repaired.
   */
  state: 'pending' | 'held';
  until: string;
}

/**
 * A freed value held back (api.md, "Pools": `quarantineSeconds`): put at the value's allocation key when a
 * Recycle pool's allocation object goes, so claims find the key taken, exactly as for a held value, and the
 * search's bitmap shows it held. It goes at `until` (TTL, or the expiry run; service/leases/quarantine.ts), and its
 * REMOVE frees the value and wakes waiting claims as an object's would.
 */
export interface QuarantineRecord {
  t: 'quarantine';
  kind: AllocationKind;
  /** The freed object's name, namespace and uid (the one it held back the value of). */
  metadata: { name: string; namespace: string; uid: string };
  poolRef: { kind: PoolKind; name: string };
  value: string;
  /** When the object went, and when the value is free again (RFC 3339 UTC, whole seconds). */
  since: string;
  until: string;
}

/**
 * Whether two pieces of stored data are the same, whatever order their maps' keys are in: DynamoDB (and
 * DynamoDB Local) return a map's attributes in no set order, so equal JSON text is no test of sameness.
 */
export function sameData(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** Stored data as JSON text with every map's keys in order: the same text for the same data. */
export function canonicalJson(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, part: unknown) =>
    part && typeof part === 'object' && !Array.isArray(part)
      ? Object.fromEntries(
          Object.keys(part)
            .sort()
            .map((key) => [key, (part as Record<string, unknown>)[key]]),
        )
      : part,
  );
}
