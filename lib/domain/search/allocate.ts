/**
 * The allocation engine, for every pool kind: walk a claim's candidates in order, skip what a read showed
 * as held, and try a conditional put on the next one (Kubernetes' allocateFromRange). The put is the only
 * arbiter; reads are hints. No locks, no counters.
 */
import { runsFrom, type Segment } from '../values/candidates.ts';
import type { ParsedValue } from '../values/values.ts';

/** Slots per block: a claim's read of allocation objects covers at most one block (one partition). */
export const BLOCK_SIZE = 64n;
/** Slots per summary: one read of the stream function's bitmap shows which of them are held. */
export const SUMMARY_SPAN = 4096n;

/** What the engine needs from the store, for one pool. */
export interface AllocationPort {
  /**
   * Slots held between `first` and `last` (inclusive, inside one block), ascending; only the first
   * `limit` of them when a limit is given. What the store holds now.
   */
  heldSlots(first: bigint, last: bigint, limit?: number): Promise<bigint[]>;
  /**
   * Which slots between `first` and `last` (inclusive, inside one summary span) the stream function's
   * summary shows held, by offset from `first`: one small read, but it may lag behind the store. Optional.
   */
  summaryHeld?(first: bigint, last: bigint): Promise<HeldTest>;
  /**
   * Conditionally creates the allocation object; false when another one holds the value. `raced`: this
   * search has lost a race (the object says so, so the stream can tell other instances).
   */
  tryCreate(value: ParsedValue, raced: boolean): Promise<boolean>;
}

/**
 * `collisions`: puts that lost. `raced`: one lost although the store itself (not the summary, which may
 * lag) showed the value free, so another caller is claiming from this pool right now.
 */
export type NextOutcome = (
  | { kind: 'allocated'; value: ParsedValue; collisions: number; raced: boolean }
  | { kind: 'exhausted'; collisions: number; raced: boolean }
  /** With `stopAtCollision`: the first race was lost, and the caller chooses where to look next. */
  | { kind: 'collided'; collisions: number; raced: true }
) & {
  /**
   * A contended search: the share of the first span it picked from at random that the summary showed
   * free (how crowded the place it chose was).
   */
  spanFreeShare?: number;
};

export interface AllocateNextOptions {
  /** Position in candidate order to start from (the pool's hint); 0 when unknown. */
  from?: bigint;
  /** Picks among free slots after a collision, to spread racing callers; lowest-first until then. */
  random?: () => number;
  /** Return at the first lost race instead of trying the block's other free slots. */
  stopAtCollision?: boolean;
  /**
   * Others are claiming from this pool now: the search picks among the summary's free values at random
   * (callers that start in one span then seldom pick the same value); and a put the summary suggested
   * that loses is more likely a value taken since the summary was written than a sign the summary is far
   * behind, so it picks another at random (cheap) before it reads the objects.
   */
  contended?: boolean;
  /**
   * Whether this caller itself took the slot a moment ago. A put the summary suggested that loses to
   * such a value says only that the summary lags; a loss to anyone else's is a race.
   */
  tookRecently?: (slot: bigint) => boolean;
}

/** Values taken by others since the summary, seen in one read, that show callers racing here. */
export const RACING_EVIDENCE = 2;
/** Held objects a read after a summary miss takes at most, to show a free value nearby cheaply. */
export const READ_AFTER_MISS_LIMIT = 6;

/** Lost puts after which a contended search stops trusting the summary and reads the objects. */
export const CONTENDED_SUMMARY_MISSES = 3;

/**
 * Allocates the first free candidate at or after `from`. A lone caller gets the lowest free candidate
 * the summary shows (it may lag: a value freed a moment ago may be passed over; a value taken a moment
 * ago costs a lost put, after which the search reads the allocation objects themselves). When a put loses a race ("mid-air collision": another claim took the value between our read
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
  let raced = false;
  // After a put the summary suggested loses, the rest of that block is read from the objects (the summary
  // lags there); then the summary again.
  let objectsUntil = -1n;
  let lastSummary: SummaryRead | undefined;
  let missed = false;
  let spanFreeShare: number | undefined;
  const ended = <T extends NextOutcome>(outcome: T): T =>
    spanFreeShare === undefined ? outcome : { ...outcome, spanFreeShare };
  for (const run of runsFrom(segments, options.from ?? 0n)) {
    let cursor = run.first;
    while (cursor <= run.last) {
      const summary = port.summaryHeld !== undefined && cursor > objectsUntil;
      const spanLast = minBig(run.last, cursor | ((summary ? SUMMARY_SPAN : BLOCK_SIZE) - 1n));
      // The first object read after a miss takes a few objects: a Query is billed by the size of what it
      // reads, and where free values are near, a few show one; where not, the next read takes the block.
      const limit = !summary && missed ? READ_AFTER_MISS_LIMIT : undefined;
      let held: HeldTest;
      // Offsets from the cursor: a span is at most SUMMARY_SPAN slots, so plain numbers, not bigints.
      let known = Number(spanLast - cursor);
      if (summary) {
        held = await port.summaryHeld!(cursor, spanLast);
        lastSummary = { first: cursor, last: spanLast, held };
      } else {
        const read = await port.heldSlots(cursor, spanLast, limit);
        // A read cut short by the limit says nothing past the last slot it returned.
        if (limit !== undefined && read.length >= limit) known = Number(read[read.length - 1]! - cursor);
        const offsets = new Set(read.map((slot) => Number(slot - cursor)));
        held = (offset) => offsets.has(offset);
        if (missed) {
          // The objects against the summary: values taken since it was written, by others than this
          // caller. One may be a user's pre-provisioned object or the stream's work; several are callers
          // racing here.
          missed = false;
          const fresh = read.filter(
            (slot) => !summaryShows(lastSummary, slot) && !(options.tookRecently?.(slot) ?? true),
          );
          if (fresh.length >= RACING_EVIDENCE) {
            raced = true;
            if (options.stopAtCollision) return ended({ kind: 'collided', collisions, raced });
          }
        }
      }
      const picks = new FreePicks(held, known);
      let reread = false;
      for (;;) {
        const spread = raced || (options.contended === true && summary);
        const offset = spread ? picks.random(random) : picks.lowest();
        if (summary && spread) spanFreeShare ??= picks.freeShareAtFirstPick();
        if (offset === undefined) break;
        const slot = cursor + BigInt(offset);
        const value = valueAt(slot);
        if (await port.tryCreate(value, raced)) return ended({ kind: 'allocated', value, collisions, raced });
        collisions++;
        if (summary && !(options.contended && collisions < CONTENDED_SUMMARY_MISSES)) {
          // It lags here: read the objects from this value to the end of its block.
          objectsUntil = slot | (BLOCK_SIZE - 1n);
          cursor = slot;
          missed = true;
          reread = true;
          break;
        }
        if (summary) continue;
        raced = true;
        if (options.stopAtCollision) return ended({ kind: 'collided', collisions, raced });
      }
      if (!reread) cursor += BigInt(known) + 1n;
    }
  }
  return ended({ kind: 'exhausted', collisions, raced });
}

/** Whether the slot at an offset of the span read is held. */
export type HeldTest = (offset: number) => boolean;

/** The last summary span a search read, to hold the objects read after a miss against. */
interface SummaryRead {
  first: bigint;
  last: bigint;
  held: HeldTest;
}

function summaryShows(summary: SummaryRead | undefined, slot: bigint) {
  return summary !== undefined && summary.first <= slot && slot <= summary.last
    ? summary.held(Number(slot - summary.first))
    : false;
}

/**
 * The free offsets of one read, [0, last], each handed out once: the lowest first, or one at random. The
 * lowest is found by a scan that resumes where it stopped; the list for random picks is only built once a
 * search spreads, as most searches take the first free offset they see.
 */
class FreePicks {
  private scan = 0;
  private readonly tried = new Set<number>();
  private free: number[] | undefined;

  constructor(
    private readonly held: HeldTest,
    private readonly last: number,
  ) {}

  lowest(): number | undefined {
    if (this.free) return this.free.shift();
    while (this.scan <= this.last && (this.held(this.scan) || this.tried.has(this.scan))) this.scan++;
    if (this.scan > this.last) return undefined;
    this.tried.add(this.scan);
    return this.scan++;
  }

  private freeAtFirstPick: number | undefined;

  random(random: () => number): number | undefined {
    if (!this.free) {
      this.free = [];
      for (let offset = this.scan; offset <= this.last; offset++)
        if (!this.held(offset) && !this.tried.has(offset)) this.free.push(offset);
      if (this.scan === 0) this.freeAtFirstPick = this.free.length;
    }
    if (this.free.length === 0) return undefined;
    return this.free.splice(Math.floor(random() * this.free.length), 1)[0];
  }

  /** The share of the span that was free when the first random pick was made, if no pick came before. */
  freeShareAtFirstPick(): number | undefined {
    return this.freeAtFirstPick === undefined ? undefined : this.freeAtFirstPick / (this.last + 1);
  }
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
