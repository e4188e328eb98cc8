/**
 * The history of a value (api.md, "The history of a value"): each period an allocation object held a
 * value is a holding, with the claim it held it for (or none), from when and until when, and how it
 * ended. Pure: what a change of an allocation object starts and ends, from the stored item before and
 * after it (the history function writes it, lib/service/history/holdings.ts).
 *
 * One value is held by one object at a time (its key is the pool and the value), and every change of
 * that key is a record of one stream shard, in order: so a value's holdings follow one another, and a
 * record's time and sequence number name the holding it starts, the same in every delivery. Its `from`
 * and `until` are when the history function read the record (milliseconds, a moment after the write;
 * the record's own time is whole seconds): the first delivery's, as the writes are conditional.
 */
import type { AllocationRecord, QuarantineRecord } from './records.ts';
import type { OwnerRef } from './validation.ts';
import type { PoolKind } from '../kinds.ts';

/** How long an ended holding is kept (the construct's `historyRetention`; three years unless told). */
export const DEFAULT_HOLDING_RETENTION_DAYS = 3 * 365;

export type HoldingEnd = 'Released' | 'Expired' | 'Bound' | 'Deleted' | 'PoolDeleted' | 'QuarantineOver';

export interface Holding {
  value: string;
  pool: { kind: PoolKind; name: string };
  /** The pool's namespace (the object's). */
  namespace: string;
  allocation: { name: string; uid: string };
  claim?: { namespace: string; name: string; uid: string };
  owner?: OwnerRef;
  /** RFC 3339 UTC with milliseconds. */
  from: string;
  until?: string;
  ended?: HoldingEnd;
}

/**
 * A stream record as holdings read it: the images, when it was read (epoch ms: a holding's `from` and
 * `until`, in milliseconds), and what names it in every delivery: its sequence number and its time
 * (whole seconds in AWS).
 */
export interface HoldingChange {
  oldImage?: Record<string, unknown>;
  newImage?: Record<string, unknown>;
  at: number;
  recordedAt: number;
  sequence: string;
  /** A REMOVE made by DynamoDB's TTL (a lease's end). */
  byTtl?: boolean;
}

/**
 * What a change does to its value's holdings. `end`: the holding of this object for this claim (none:
 * held for nobody) ends, which a record delivered again late finds ended already.
 */
export interface HoldingTransition {
  end?: {
    /** The value's pool (its namespace, kind and name) and the value, whose holdings it ends one of. */
    pool: { namespace: string; kind: PoolKind; name: string };
    value: string;
    allocationUid: string;
    claimUid?: string;
    until: string;
    ended?: HoldingEnd;
  };
  start?: Holding;
}

const allocationOf = (image: Record<string, unknown> | undefined): AllocationRecord | undefined =>
  image?.t === 'alloc' ? (image as unknown as AllocationRecord) : undefined;
const quarantineOf = (image: Record<string, unknown> | undefined): QuarantineRecord | undefined =>
  image?.t === 'quarantine' ? (image as unknown as QuarantineRecord) : undefined;

const poolOfObject = (object: AllocationRecord) => ({
  namespace: object.metadata.namespace,
  kind: object.spec.poolRef.kind as PoolKind,
  name: object.spec.poolRef.name,
});

/** The end of an object's holding (`ended` absent: decided by who removed it). */
const endOf = (object: AllocationRecord, until: string, ended?: HoldingEnd): HoldingTransition['end'] => ({
  pool: poolOfObject(object),
  value: object.value,
  allocationUid: object.metadata.uid,
  claimUid: claimOf(object)?.uid,
  until,
  ...(ended ? { ended } : {}),
});

/**
 * A freed value held back (a quarantine, at the value's key): a holding for nobody, by the object that
 * went, which ends `QuarantineOver` when the quarantine goes (its end, or a claim taking the value).
 */
function quarantineTransition(
  before: QuarantineRecord | undefined,
  after: QuarantineRecord | undefined,
  change: HoldingChange,
  at: string,
): HoldingTransition {
  const object = allocationOf(change.newImage);
  const ends: HoldingTransition['end'] =
    before && before.metadata.uid !== after?.metadata.uid
      ? {
          pool: {
            namespace: before.metadata.namespace,
            kind: before.poolRef.kind,
            name: before.poolRef.name,
          },
          value: before.value,
          allocationUid: before.metadata.uid,
          until: at,
          ended: 'QuarantineOver',
        }
      : undefined;
  const starts =
    after && before?.metadata.uid !== after.metadata.uid
      ? {
          value: after.value,
          pool: { kind: after.poolRef.kind, name: after.poolRef.name },
          namespace: after.metadata.namespace,
          allocation: { name: after.metadata.name, uid: after.metadata.uid },
          from: at,
        }
      : object
        ? holdingOf(object, at)
        : undefined;
  return { ...(ends ? { end: ends } : {}), ...(starts ? { start: starts } : {}) };
}

/** The claim an object holds its value for, if any (a cleared uid: none). */
function claimOf(object: AllocationRecord): Holding['claim'] {
  const ref = object.spec.claimRef;
  if (!ref?.uid) return undefined;
  return { namespace: ref.namespace ?? object.metadata.namespace, name: ref.name, uid: ref.uid };
}

export const holdingTime = (at: number) => new Date(at).toISOString();

/** The holding an object's value is in now, from `from` (a start, or the repair sweep's). */
export function holdingOf(object: AllocationRecord, from: string): Holding {
  const claim = claimOf(object);
  return {
    value: object.value,
    pool: { kind: object.spec.poolRef.kind as PoolKind, name: object.spec.poolRef.name },
    namespace: object.metadata.namespace,
    allocation: { name: object.metadata.name, uid: object.metadata.uid },
    ...(claim ? { claim } : {}),
    ...(object.spec.owner ? { owner: object.spec.owner } : {}),
    from,
  };
}

/**
 * What a change of an allocation object's item does: an object made starts a holding; a claim binding
 * an unbound object ends its holding `Bound` and starts the claim's; a claim's uid cleared (Retain) ends
 * its holding `Released` and starts an unbound one; an object removed ends its holding, how (`ended`
 * absent) decided by who removed it (service/history/holdings.ts reads the claim and the pool). A
 * quarantine at the value's key starts and ends a holding of its own.
 */
export function holdingTransition(change: HoldingChange): HoldingTransition {
  const at = holdingTime(change.at);
  const held = [quarantineOf(change.oldImage), quarantineOf(change.newImage)] as const;
  if (held[0] || held[1]) return quarantineTransition(held[0], held[1], change, at);
  const before = allocationOf(change.oldImage);
  const after = allocationOf(change.newImage);
  if (!before && after) return { start: holdingOf(after, at) };
  if (before && !after) return { end: endOf(before, at) };
  if (!before || !after) return {};
  if (before.metadata.uid !== after.metadata.uid)
    return { end: endOf(before, at), start: holdingOf(after, at) };
  const was = claimOf(before);
  const is = claimOf(after);
  if (was?.uid === is?.uid) return {};
  return { end: endOf(before, at, was ? 'Released' : 'Bound'), start: holdingOf(after, at) };
}
