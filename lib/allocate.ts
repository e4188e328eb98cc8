/**
 * The allocation engine, for every pool kind: walk a claim's candidates in order, skip what a read showed
 * as held, and try a conditional put on the next one (Kubernetes' allocateFromRange). The put is the only
 * arbiter; reads are hints. No locks, no counters.
 */
import { runsFrom, type Segment } from './candidates.ts';
import type { ParsedValue } from './values.ts';

/** Slots per block: one Query reads a block, and the table keeps a block in one partition. */
export const BLOCK_SIZE = 64n;

/** What the engine needs from the store, for one pool. */
export interface AllocationPort {
  /**
   * Slots held between `first` and `last` (inclusive, inside one block), ascending; only the first
   * `limit` of them when a limit is given.
   */
  heldSlots(first: bigint, last: bigint, limit?: number): Promise<bigint[]>;
  /** Conditionally creates the allocation object; false when another one holds the value. */
  tryCreate(value: ParsedValue): Promise<boolean>;
}

export type NextOutcome =
  | { kind: 'allocated'; value: ParsedValue; collisions: number }
  | { kind: 'exhausted'; collisions: number }
  /** With `stopAtCollision`: the first put lost a race, and the caller chooses where to look next. */
  | { kind: 'collided'; collisions: number };

export interface AllocateNextOptions {
  /** Position in candidate order to start from (the pool's hint); 0 when unknown. */
  from?: bigint;
  /** Picks among free slots after a collision, to spread racing callers; lowest-first until then. */
  random?: () => number;
  /**
   * Reads at most this many held slots on the first read, whole blocks after that. A Query is billed by
   * the size of what it reads, so where free values are dense a few items show one and the rest of the
   * block is not read; where they are not, the second read takes the block.
   */
  firstReadLimit?: number;
  /** Return at the first lost race instead of trying the block's other free slots. */
  stopAtCollision?: boolean;
}

/**
 * Allocates the first free candidate at or after `from`. A lone caller always gets the lowest free
 * candidate. When a put loses a race ("mid-air collision": another claim took the value between our read
 * and our put), the engine moves on, picking at random among the free slots it read in that block, so
 * racing callers spread out instead of colliding on the same next value again.
 */
export async function allocateNext(
  segments: readonly Segment[],
  valueAt: (slot: bigint) => ParsedValue,
  port: AllocationPort,
  options: AllocateNextOptions = {},
): Promise<NextOutcome> {
  const random = options.random ?? Math.random;
  let collisions = 0;
  let reads = 0;
  for (const run of runsFrom(segments, options.from ?? 0n)) {
    let cursor = run.first;
    while (cursor <= run.last) {
      const blockLast = minBig(run.last, cursor | (BLOCK_SIZE - 1n));
      const limit = reads++ === 0 ? options.firstReadLimit : undefined;
      const read = await port.heldSlots(cursor, blockLast, limit);
      // A read cut short by the limit says nothing past the last slot it returned.
      const known = limit !== undefined && read.length >= limit ? read[read.length - 1]! : blockLast;
      const held = new Set(read);
      const free: bigint[] = [];
      for (let slot = cursor; slot <= known; slot++) if (!held.has(slot)) free.push(slot);
      while (free.length > 0) {
        const pick = collisions === 0 ? 0 : Math.floor(random() * free.length);
        const [slot] = free.splice(pick, 1) as [bigint];
        if (await port.tryCreate(valueAt(slot)))
          return { kind: 'allocated', value: valueAt(slot), collisions };
        collisions++;
        if (options.stopAtCollision) return { kind: 'collided', collisions };
      }
      cursor = known + 1n;
    }
  }
  return { kind: 'exhausted', collisions };
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
