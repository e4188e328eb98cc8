/**
 * A pool's counts (allocated, held, free) and search hint, kept by the stream function at a cost that
 * does not grow with the pool: each batch touches the blocks its records name, never the whole pool.
 *
 * Lambda delivers stream records at least once, and a record names no shard, so a plain "add 1" would
 * count a redelivered record twice. Instead every block has a summary (its held slots, lib/table.ts),
 * which a record's slot change makes true again however often it is applied; the summary write also
 * records what it changed as a marker, and the marker, not the record, is what reaches the counts:
 *
 *   0. read the block's summary           what the change does to it (a repeat changes nothing)
 *   A. write slots + marker q             one write: a crash after it leaves q for the retry
 *      list the block in the directory    once per block, before q can reach the counts
 *   B. counts += q, applied += q          conditional on the counts' revision: q counts once
 *   C. drop q from the summary
 *   D. drop q from applied                a crash before D leaves a stale id, never a wrong count
 *
 * Records of one item arrive in order, so a block's summary ends as the block is. A recount (a new pool,
 * a spec change) reads the summaries the directory lists, and takes every marker it sees as counted.
 */
import { randomUUID } from 'node:crypto';
import { containsSlot, ordinalOf, runsFrom } from './candidates.ts';
import { BLOCK_SIZE } from './allocate.ts';
import type { ClaimContext } from './claims.ts';
import { poolKindInfo } from './kinds.ts';
import { spaceOf } from './objects.ts';
import type { PoolCounts, PoolRecord } from './records.ts';
import {
  BLOCK_BITS,
  objectKey,
  type BlockRef,
  type BlockSummary,
  type MarkerEntry,
  type PoolId,
} from './table.ts';
import type { PoolSpace } from './values.ts';

/** An allocation object of the pool appeared (present) or went, as its stream record says. */
export interface SlotChange {
  family: 4 | 6 | undefined;
  slot: bigint;
  present: boolean;
  /** The value's prefix length (IP prefixes), so a value of another length is not counted as held. */
  length?: number;
}

export interface TallyResult {
  /** Values may have been freed (or the pool is new or its spec changed): waiting claims may fit now. */
  freed: boolean;
  /** A candidate is free. */
  available: boolean;
}

/** How often a counts write is retried after another write to the same counts came first. */
const WRITE_ATTEMPTS = 20;
/** Blocks the hint may be moved over in one batch; the next batch goes on from there. */
const HINT_BLOCKS = 16;

const timestamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const refId = (ref: BlockRef) => `${ref.family ?? 0}:${ref.block.toString(16)}`;

function poolKey(id: PoolId) {
  return objectKey(id.namespace, poolKindInfo(id.kind)!.resource, id.name);
}

/**
 * Applies a batch's slot changes of one pool (in record order) to its block summaries and its counts;
 * with `recount`, recounts the pool from its summaries instead of adding (a new pool, a spec change).
 */
export async function tallyPool(
  ctx: ClaimContext,
  id: PoolId,
  changes: readonly SlotChange[],
  options: { recount?: boolean } = {},
): Promise<TallyResult | undefined> {
  const summaries = new Map<string, { ref: BlockRef; summary: BlockSummary }>();
  const byBlock = new Map<string, { ref: BlockRef; last: Map<number, SlotChange> }>();
  const listedNow = new Set<string>();
  for (const change of changes) {
    const ref = { family: change.family, block: change.slot >> BLOCK_BITS };
    const entry = byBlock.get(refId(ref)) ?? { ref, last: new Map() };
    entry.last.set(Number(change.slot & (BLOCK_SIZE - 1n)), change);
    byBlock.set(refId(ref), entry);
  }
  for (const { ref, last } of byBlock.values()) {
    const summary = await ctx.table.readSummary(id, ref);
    const entries: MarkerEntry[] = [];
    const slots: { offset: number; length: number | undefined }[] = [];
    for (const [offset, change] of last) {
      const held = summary.slots.get(offset);
      if (change.present && held === undefined) {
        const length = change.length ?? 0;
        entries.push([offset, 1, length]);
        slots.push({ offset, length });
        summary.slots.set(offset, length);
      } else if (!change.present && held !== undefined) {
        entries.push([offset, -1, held]);
        slots.push({ offset, length: undefined });
        summary.slots.delete(offset);
      }
    }
    if (entries.length > 0) {
      const marker = { id: randomUUID().replaceAll('-', '').slice(0, 16), entries };
      await ctx.table.writeSummary(id, ref, slots, marker);
      summary.pending.set(marker.id, entries);
    }
    // Listed before any of its markers can reach the counts, so a recount never misses a counted block.
    if (!summary.listed && summary.pending.size > 0) {
      await ctx.table.listBlock(id, ref);
      listedNow.add(refId(ref));
    }
    summaries.set(refId(ref), { ref, summary });
  }

  const outcome = options.recount
    ? await recount(ctx, id, summaries)
    : await applyMarkers(ctx, id, summaries);
  if (!outcome) return undefined;
  // C and D: the counts hold these markers now.
  for (const { ref, summary } of summaries.values()) {
    const done = [...summary.pending.keys()].filter((marker) => outcome.applied.has(marker));
    if (done.length > 0 || listedNow.has(refId(ref))) await ctx.table.finishSummary(id, ref, done);
  }
  if (outcome.applied.size > 0) await forgetApplied(ctx, id, outcome.applied);
  return outcome.result;
}

interface Applied {
  result: TallyResult;
  /** Markers the counts now hold, to drop from the summaries and then from `applied`. */
  applied: Set<string>;
}

/** Step B: adds the markers the counts do not hold yet. */
async function applyMarkers(
  ctx: ClaimContext,
  id: PoolId,
  summaries: Map<string, { ref: BlockRef; summary: BlockSummary }>,
): Promise<Applied | undefined> {
  const markers = [...summaries.values()].flatMap(({ ref, summary }) =>
    [...summary.pending].map(([marker, entries]) => ({ marker, ref, entries })),
  );
  if (markers.length === 0) return { result: { freed: false, available: true }, applied: new Set() };
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const pool = await ctx.table.get<PoolRecord>(poolKey(id));
    // No pool (yet): the markers stay on the summaries; the pool's first recount takes them.
    if (pool?.t !== 'pool') return undefined;
    const space = spaceOf(pool);
    const previous = pool.counts;
    const applied = { ...(previous?.applied ?? {}) };
    let allocated = previous?.allocated ?? 0;
    let held = BigInt(previous?.held ?? '0');
    let hint =
      previous && previous.generation === pool.metadata.generation ? BigInt(previous.searchFrom) : 0n;
    let freed = false;
    let took = false;
    const now = timestamp();
    const fresh = new Set<string>();
    for (const { marker, ref, entries } of markers) {
      if (applied[marker] !== undefined) continue;
      applied[marker] = now;
      fresh.add(marker);
      for (const [offset, delta, length] of entries) {
        allocated += delta;
        const slot = (ref.block << BLOCK_BITS) + BigInt(offset);
        const ordinal = candidateOrdinal(space, ref.family, slot, length);
        if (ordinal === undefined) continue;
        held += BigInt(delta);
        if (delta < 0) {
          freed = true;
          if (ordinal < hint) hint = ordinal;
        } else if (ordinal >= hint) took = true;
      }
    }
    if (fresh.size === 0) {
      return {
        result: { freed: false, available: previous?.available ?? true },
        applied: allMarkers(markers),
      };
    }
    if (took) hint = await advanceHint(ctx, id, space, hint, summaries);
    const counts = nextCounts(pool, previous, { allocated, held, searchFrom: hint, freed, applied }, space);
    if (await ctx.table.writeTally(poolKey(id), pool.metadata.uid, previous?.revision, counts)) {
      return { result: { freed, available: counts.available ?? true }, applied: allMarkers(markers) };
    }
  }
  throw new Error(`counts of ${id.kind} ${id.name} kept changing; the batch is retried`);
}

function allMarkers(markers: readonly { marker: string }[]): Set<string> {
  return new Set(markers.map(({ marker }) => marker));
}

/** The slot's position in candidate order, when it holds a value of the pool's kind that is a candidate. */
function candidateOrdinal(
  space: PoolSpace,
  family: 4 | 6 | undefined,
  slot: bigint,
  length: number,
): bigint | undefined {
  if (!containsSlot(space.segments, slot)) return undefined;
  const value = space.valueAt(slot);
  if (value.family !== family) return undefined;
  if (length !== 0 && value.length !== undefined && value.length !== length) return undefined;
  return ordinalOf(space.segments, slot);
}

/**
 * The first candidate at or after `from` that the summaries show free, looking at no more than
 * HINT_BLOCKS blocks (the hint only has to be at or below the first free candidate).
 */
async function advanceHint(
  ctx: ClaimContext,
  id: PoolId,
  space: PoolSpace,
  from: bigint,
  known: Map<string, { ref: BlockRef; summary: BlockSummary }>,
): Promise<bigint> {
  const family = familyOf(space);
  let blocks = 0;
  let ordinal = from;
  for (const run of runsFrom(space.segments, from)) {
    let cursor = run.first;
    while (cursor <= run.last) {
      if (blocks++ >= HINT_BLOCKS) return ordinal;
      const ref = { family, block: cursor >> BLOCK_BITS };
      const summary = known.get(refId(ref))?.summary ?? (await ctx.table.readSummary(id, ref));
      const blockLast = minBig(run.last, cursor | (BLOCK_SIZE - 1n));
      for (let slot = cursor; slot <= blockLast; slot++, ordinal++) {
        if (!summary.slots.has(Number(slot & (BLOCK_SIZE - 1n)))) return ordinal;
      }
      cursor = blockLast + 1n;
    }
  }
  return ordinal;
}

/** Recounts the pool from the summaries its directory lists; every marker seen counts as applied. */
async function recount(
  ctx: ClaimContext,
  id: PoolId,
  touched: Map<string, { ref: BlockRef; summary: BlockSummary }>,
): Promise<Applied | undefined> {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const pool = await ctx.table.get<PoolRecord>(poolKey(id));
    if (pool?.t !== 'pool') return undefined;
    const space = spaceOf(pool);
    const previous = pool.counts;
    const seen = new Set<string>();
    const heldOrdinals: bigint[] = [];
    let allocated = 0;
    for await (const ref of ctx.table.listedBlocks(id)) {
      const summary = await ctx.table.readSummary(id, ref);
      touched.set(refId(ref), { ref, summary });
      for (const marker of summary.pending.keys()) seen.add(marker);
      for (const [offset, length] of summary.slots) {
        allocated++;
        const ordinal = candidateOrdinal(
          space,
          ref.family,
          (ref.block << BLOCK_BITS) + BigInt(offset),
          length,
        );
        if (ordinal !== undefined) heldOrdinals.push(ordinal);
      }
    }
    heldOrdinals.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const now = timestamp();
    const applied = { ...(previous?.applied ?? {}) };
    for (const marker of seen) applied[marker] ??= now;
    const counts = nextCounts(
      pool,
      previous,
      {
        allocated,
        held: BigInt(heldOrdinals.length),
        searchFrom: firstFree(heldOrdinals, 0n),
        freed: true,
        applied,
      },
      space,
    );
    if (await ctx.table.writeTally(poolKey(id), pool.metadata.uid, previous?.revision, counts)) {
      return { result: { freed: true, available: counts.available ?? true }, applied: seen };
    }
  }
  throw new Error(`counts of ${id.kind} ${id.name} kept changing; the batch is retried`);
}

/** Step D: the summaries no longer carry these markers, so `applied` need not remember them. */
async function forgetApplied(ctx: ClaimContext, id: PoolId, markers: Set<string>): Promise<void> {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const pool = await ctx.table.get<PoolRecord>(poolKey(id));
    const previous = pool?.t === 'pool' ? pool.counts : undefined;
    if (!pool || !previous?.applied) return;
    const applied = Object.fromEntries(
      Object.entries(previous.applied).filter(([marker]) => !markers.has(marker)),
    );
    if (Object.keys(applied).length === Object.keys(previous.applied).length) return;
    const counts = { ...previous, applied, revision: randomUUID() };
    if (await ctx.table.writeTally(poolKey(id), pool.metadata.uid, previous.revision, counts)) return;
  }
}

/** The first position at or after `from` that is not in `sortedHeld` (ascending). */
export function firstFree(sortedHeld: readonly bigint[], from: bigint): bigint {
  let free = from;
  for (const ordinal of sortedHeld) {
    if (ordinal === free) free++;
    else if (ordinal > free) break;
  }
  return free;
}

/**
 * The counts to write. The epoch (what a claim handler's search memory is keyed on) changes only when
 * values may have been freed or the spec changed, so the memory survives tallies that only saw claims.
 */
function nextCounts(
  pool: PoolRecord,
  previous: PoolCounts | undefined,
  tally: {
    allocated: number;
    held: bigint;
    searchFrom: bigint;
    freed: boolean;
    applied: Record<string, string>;
  },
  space: PoolSpace,
): PoolCounts {
  const now = timestamp();
  const available = tally.held < space.total;
  const sameGeneration = previous?.generation === pool.metadata.generation;
  const freed =
    tally.freed ||
    !sameGeneration ||
    (previous !== undefined && BigInt(previous.searchFrom) > tally.searchFrom);
  return {
    allocated: tally.allocated,
    held: tally.held.toString(),
    searchFrom: tally.searchFrom.toString(),
    generation: pool.metadata.generation,
    updatedAt: now,
    revision: randomUUID(),
    epoch: !freed && previous?.epoch ? previous.epoch : randomUUID(),
    applied: tally.applied,
    available,
    availableSince:
      previous?.available === available && previous.availableSince ? previous.availableSince : now,
  };
}

function familyOf(space: PoolSpace): 4 | 6 | undefined {
  return space.kind === 'IndexPool' ? undefined : space.valueAt(space.segments[0]?.first ?? 0n).family;
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
