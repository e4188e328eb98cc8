/**
 * The free-run search of a pool of a range of prefix lengths, pure. A group summary is a bitmap of the
 * pool's finest slots (prefixes of its longest length, `max`); a candidate of length L is the aligned run
 * of 2^(max−L) finest slots it covers, free when every bit of the run is clear (no allocation object of
 * any length overlaps it). Runs are aligned, so a run never straddles two groups unless it holds whole
 * groups (2^(max−L) > 4096), and then it is free when each of its groups is empty.
 */
import type { HeldTest } from './allocate.ts';

/** log2 of the finest slots one group summary covers (as lib/store/keys.ts GROUP_BITS). */
export const RUN_GROUP_BITS = 12;

/** Whether the `size` bits from `offset` are all clear. */
export function runFree(held: HeldTest, offset: number, size: number): boolean {
  for (let i = 0; i < size; i++) if (held(offset + i)) return false;
  return true;
}

/**
 * The candidates of length L (numbered `first`..`last`, all inside one group) whose runs the group's
 * bitmap shows free, ascending. `shift` = max − L ≤ RUN_GROUP_BITS; `group` is the group's number.
 */
export function freeCandidatesInGroup(
  held: HeldTest,
  group: bigint,
  first: bigint,
  last: bigint,
  shift: number,
): bigint[] {
  const size = 1 << shift;
  const base = group << BigInt(RUN_GROUP_BITS);
  const free: bigint[] = [];
  for (let candidate = first; candidate <= last; candidate++) {
    const offset = Number((candidate << BigInt(shift)) - base);
    if (runFree(held, offset, size)) free.push(candidate);
  }
  return free;
}

/** The groups a candidate of length L covers (shift = max − L): one, or 2^(shift − 12) whole groups. */
export function groupsOfCandidate(candidate: bigint, shift: number): { first: bigint; last: bigint } {
  if (shift <= RUN_GROUP_BITS) {
    const group = (candidate << BigInt(shift)) >> BigInt(RUN_GROUP_BITS);
    return { first: group, last: group };
  }
  const per = BigInt(shift - RUN_GROUP_BITS);
  return { first: candidate << per, last: ((candidate + 1n) << per) - 1n };
}

/** The last candidate of length L in the group of `candidate` (shift ≤ 12), or `candidate` itself. */
export function lastCandidateOfGroup(candidate: bigint, shift: number): bigint {
  if (shift >= RUN_GROUP_BITS) return candidate;
  const perGroup = BigInt(RUN_GROUP_BITS - shift);
  return candidate | ((1n << perGroup) - 1n);
}
