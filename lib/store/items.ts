/**
 * Item shapes of the table as stored, pure: an allocation object with its index entry, and a group
 * summary (a bitmap of held slots, `b`, of those held by name holds, `h`, and of those held back by a
 * quarantine, `z` (a subset of `h`: neither is an allocation object); its version, and the slot
 * changes not yet confirmed in the pool's counts, `q_<id>`; service/counts/tally.ts keeps them).
 */
import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import type { Resource } from '../domain/kinds.ts';
import type { AllocationRecord, ItemKey } from '../domain/objects/records.ts';
import { allocationIndexKeys, GROUP_BITS } from './keys.ts';

export type Item = Record<string, NativeAttributeValue>;
export type Stored<T> = T & ItemKey;

/** An allocation object as stored: its record, its key, and its entry in the `allocations` index. */
export function allocationItem(
  key: ItemKey,
  record: AllocationRecord,
  slot: bigint,
  resource: Resource,
): Item {
  const index = allocationIndexKeys(
    record.metadata.namespace,
    resource,
    record.spec.poolRef.name,
    slot,
    key.sk,
  );
  return { ...key, ...record, ...index };
}

const GROUP_BYTES = Number(1n << GROUP_BITS) / 8;

/**
 * A slot change not yet confirmed in the pool's counts: offset in the group, +1 or −1 (held) or 0 (a hold
 * changed, the slot stays held), 1 when the allocation was made after a lost race, `span` (that many
 * slots from `offset` flipped: 1 but for pools of a range of prefix lengths), `objects`, the change
 * in allocation objects when it differs from `delta` (a name hold holds a slot but is no allocation
 * object: 0; a hold that replaced an object: −1; a run of a pool of a range of prefix lengths counts
 * one object at its first group only; service/counts/runs.ts), and `quarantined`, the change in values
 * held back by a quarantine (absent: 0).
 */
export type MarkerEntry = [
  offset: number,
  delta: 1 | 0 | -1,
  raced?: 0 | 1,
  span?: number,
  objects?: 1 | 0 | -1,
  quarantined?: 1 | 0 | -1,
];

/** A group's summary as the stream function keeps it. */
export interface GroupSummary {
  /** Bit i: slot (group << GROUP_BITS) + i is held, by an allocation object or a name hold. */
  bits: Uint8Array;
  /** Bit i: what holds slot i is a name hold (service/allocation/name-holds.ts), not an allocation object. */
  holds: Uint8Array;
  /** Bit i: what holds slot i is a quarantine (domain/objects/records.ts QuarantineRecord); its `holds` bit is set too. */
  quarantines: Uint8Array;
  /** Bumped by every write of the bits; absent until the first. */
  version: number | undefined;
  /** Slot changes recorded here whose records may not have reached the counts: marker id → entries. */
  pending: Map<string, MarkerEntry[]>;
  /** Whether the pool's directory lists this group. */
  listed: boolean;
  /** Pools of a range of prefix lengths: the objects whose runs touch the group (service/counts/runs.ts). */
  members: Set<string>;
}

export const MARKER_ATTRIBUTE = 'q_';

export function summaryOf(item: Item | undefined): GroupSummary {
  const bits = new Uint8Array(GROUP_BYTES);
  if (item?.b instanceof Uint8Array) bits.set(item.b.subarray(0, GROUP_BYTES));
  const holds = new Uint8Array(GROUP_BYTES);
  if (item?.h instanceof Uint8Array) holds.set(item.h.subarray(0, GROUP_BYTES));
  const quarantines = new Uint8Array(GROUP_BYTES);
  if (item?.z instanceof Uint8Array) quarantines.set(item.z.subarray(0, GROUP_BYTES));
  const summary: GroupSummary = {
    bits,
    holds,
    quarantines,
    version: typeof item?.v === 'number' ? item.v : undefined,
    pending: new Map(),
    listed: item?.l === 1,
    members: new Set(Object.keys((item?.m as Record<string, unknown> | undefined) ?? {})),
  };
  for (const [name, value] of Object.entries(item ?? {})) {
    if (name.startsWith(MARKER_ATTRIBUTE)) {
      summary.pending.set(name.slice(MARKER_ATTRIBUTE.length), value as MarkerEntry[]);
    }
  }
  return summary;
}

/** The bitmap as stored: trailing zero bytes dropped (a pool's first group of a small pool stays small). */
export function storedBits(bits: Uint8Array): Uint8Array {
  let end = bits.length;
  while (end > 1 && bits[end - 1] === 0) end--;
  return bits.slice(0, end);
}

/** Whether slot `offset` of a group's bitmap is held. */
export function isHeld(bits: Uint8Array, offset: number): boolean {
  return ((bits[offset >> 3]! >> (offset & 7)) & 1) === 1;
}

export function setHeld(bits: Uint8Array, offset: number, held: boolean): void {
  if (held) bits[offset >> 3]! |= 1 << (offset & 7);
  else bits[offset >> 3]! &= ~(1 << (offset & 7));
}
