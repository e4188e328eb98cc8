/**
 * Group summaries of IPPrefixPools with a range of lengths (the explicit addition to tally.ts's format).
 *
 * Their bitmap `b` is of the pool's finest slots, as for every pool, so a claim reads one item to see
 * which aligned runs are free. But objects of such a pool may overlap for a moment (between one's put
 * and its taking back, service/allocation/prefix-check.ts), so a record cannot simply flip bits: the REMOVE of
 * the one taken back would clear bits the other still covers. Instead a group keeps its members, `m`
 * (`<first finest slot, hex>+<log2 of its run>` → 1, each object whose run touches the group), which a
 * record adds or removes exactly as a bit is set or cleared for one value (a repeat changes nothing),
 * and the bitmap is the union of the members' runs. The marker of such a change records the bits
 * that flipped as runs, `[offset, ±1, raced, span, objects]`: `span` bits from `offset`, and the
 * change in the object count (an object is counted in the group of its first slot only). Markers of a
 * pool of one length stay `[offset, ±1, raced?]` and its groups carry no `m`.
 *
 * A name hold of a prefix of such a pool (service/allocation/name-holds.ts) is a member too, `<first>+<log2>h`: its
 * run is held (in `b`, and in the holds bitmap `h`), but it is no allocation object (counted 0).
 */
import type { MarkerEntry } from '../../store/items.ts';
import { setHeld } from '../../store/items.ts';

/** log2 of a group's slots (as store/keys.ts GROUP_BITS). */
const GROUP_BITS = 12n;
const GROUP_SIZE = 1n << GROUP_BITS;

/** The member id of an object whose run starts at finest slot `first` and holds 2^shift slots. */
export function memberId(first: bigint, shift: number): string {
  return `${first.toString(16)}+${shift}`;
}

/** The member id of a name hold of the prefix whose run starts at `first` and holds 2^shift slots. */
export function holdMemberId(first: bigint, shift: number): string {
  return `${memberId(first, shift)}h`;
}

/**
 * The member a prefix (`slot` numbered at its own `length`) of a pool whose finest length is `finest`
 * makes: an object's, or (`hold`) a name hold's, and the run of finest slots it covers.
 */
export function prefixMember(
  value: { slot: bigint; length?: number },
  finest: number,
  hold: boolean,
): { member: string; first: bigint; span: bigint } {
  const shift = finest - value.length!;
  const first = value.slot << BigInt(shift);
  return {
    member: hold ? holdMemberId(first, shift) : memberId(first, shift),
    first,
    span: 1n << BigInt(shift),
  };
}

export function isHoldMember(id: string): boolean {
  return id.endsWith('h');
}

/** The run of finest slots a member (an object's or a hold's) covers. */
export function memberRun(id: string): { first: bigint; last: bigint } {
  const [first, shift] = id.split('+');
  const start = BigInt(`0x${first}`);
  return { first: start, last: start + (1n << BigInt(Number.parseInt(shift ?? '0', 10))) - 1n };
}

/** Whether the member is an allocation object counted in `group` (its run starts there; no hold). */
export function countedIn(id: string, group: bigint): boolean {
  return !isHoldMember(id) && startsIn(id, group);
}

/** A group's bitmaps from its members: held (`b`, every run) and name-held (`h`, the holds' runs). */
export function bitmapsOfMembers(
  members: Iterable<string>,
  group: bigint,
  bytes: number,
): { bits: Uint8Array; holds: Uint8Array } {
  const all = [...members];
  return {
    bits: bitsOfMembers(all, group, bytes),
    holds: bitsOfMembers(all.filter(isHoldMember), group, bytes),
  };
}

/** Whether the member's run starts in `group` (where the object is counted). */
export function startsIn(id: string, group: bigint): boolean {
  return memberRun(id).first >> GROUP_BITS === group;
}

/** The groups a run of finest slots touches, each with the part of the run inside it. */
export function groupsOfRun(first: bigint, span: bigint): { group: bigint; slot: bigint }[] {
  const out: { group: bigint; slot: bigint }[] = [];
  const last = first + span - 1n;
  for (let group = first >> GROUP_BITS; group <= last >> GROUP_BITS; group++) {
    const start = group << GROUP_BITS;
    out.push({ group, slot: start > first ? start : first });
  }
  return out;
}

/** A group's bitmap from its members: the union of their runs inside it. */
export function bitsOfMembers(members: Iterable<string>, group: bigint, bytes: number): Uint8Array {
  const bits = new Uint8Array(bytes);
  const base = group << GROUP_BITS;
  for (const id of members) {
    const run = memberRun(id);
    const from = run.first > base ? run.first : base;
    const to = run.last < base + GROUP_SIZE - 1n ? run.last : base + GROUP_SIZE - 1n;
    for (let slot = from; slot <= to; slot++) setHeld(bits, Number(slot - base), true);
  }
  return bits;
}

/** The marker entries of a change from `before` to `after`: the flipped bits as runs, and the count. */
export function flippedRuns(
  before: Uint8Array,
  after: Uint8Array,
  raced: boolean,
  objects: -1 | 0 | 1,
): MarkerEntry[] {
  const entries: MarkerEntry[] = [];
  const bitAt = (bits: Uint8Array, i: number) => (bits[i >> 3]! >> (i & 7)) & 1;
  const size = Number(GROUP_SIZE);
  for (let i = 0; i < size;) {
    const was = bitAt(before, i);
    const now = bitAt(after, i);
    if (was === now) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < size && bitAt(before, end) === was && bitAt(after, end) === now) end++;
    entries.push([i, now === 1 ? 1 : -1, raced ? 1 : 0, end - i, entries.length === 0 ? objects : 0]);
    i = end;
  }
  // Nothing flipped (another member still covers the run): the object count still changes.
  if (entries.length === 0 && objects !== 0) entries.push([0, 1, raced ? 1 : 0, 0, objects]);
  return entries;
}
