/**
 * One pool's walk by the repair sweep (service/repair/pools.ts, and service/repair/ranged.ts for pools of
 * a range of prefix lengths): the group summaries it read, what objects it saw, and the small steps both
 * kinds of check share.
 */
import type { AllocationRecord, PoolRecord } from '../../domain/objects/records.ts';
import type { GroupSummary, Stored } from '../../store/items.ts';
import { GROUP_BITS, type GroupRef, type PoolId } from '../../store/keys.ts';
import { spend, type Sweep } from './state.ts';

export const GROUP_SIZE = 1n << GROUP_BITS;

export const refId = (ref: GroupRef) => `${ref.family ?? 0}:${ref.group.toString(16)}`;

/** One pool's group summaries as this run read them (consistently), and which objects each group has. */
export interface PoolWalk {
  pool: Stored<PoolRecord>;
  id: PoolId;
  summaries: Map<string, { ref: GroupRef; summary: GroupSummary }>;
  /**
   * An IPPrefixPool of a range of prefix lengths: its summaries are the union of member runs (`m`,
   * service/counts/runs.ts), objects' and name holds', checked by service/repair/ranged.ts.
   */
  ranged: boolean;
  /** Per group, the slots that hold an object; only when this run walked the pool's objects from the start. */
  seen?: Map<string, Set<bigint>>;
  /** The same for a ranged pool: per group, the members of the objects whose runs touch it. */
  seenMembers?: Map<string, Set<string>>;
  /** The objects by value; only when this run walked the pool's objects from the start (repair/holdings.ts). */
  objects?: Map<string, AllocationRecord>;
  /** A shared pool's holders per namespace, read once in a walk (service/repair/holders.ts). */
  holders?: Map<string, string[]>;
}

export async function readSummary(sweep: Sweep, walk: PoolWalk, ref: GroupRef): Promise<GroupSummary> {
  const cached = walk.summaries.get(refId(ref));
  if (cached) return cached.summary;
  spend(sweep);
  const summary = await sweep.ctx.table.summaries.readGroup(walk.id, ref);
  walk.summaries.set(refId(ref), { ref, summary });
  return summary;
}

export function olderThanGrace(sweep: Sweep, allocation: AllocationRecord): boolean {
  return Date.now() - Date.parse(allocation.metadata.creationTimestamp) > sweep.graceMs;
}

/** Lists a group in the pool's directory, so a recount sees it. */
export async function listGroup(sweep: Sweep, walk: PoolWalk, ref: GroupRef): Promise<boolean> {
  await sweep.ctx.table.summaries.listGroup(walk.id, ref);
  await sweep.ctx.table.summaries.noteListed(walk.id, ref);
  const cached = walk.summaries.get(refId(ref));
  if (cached) cached.summary = { ...cached.summary, listed: true };
  return true;
}
