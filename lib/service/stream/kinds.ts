/**
 * The record kinds the stream function knows, by item type (`t`), and what each asks of a batch: the
 * items its work must read (`reads`, read once for the whole batch, lib/service/stream/reads.ts) and the
 * work itself (`work`), one life of one item at a time (lib/service/stream/records.ts), and the slots it
 * changes in its pool's summaries (`slots`, once the batch's work is done). A new kind is a file beside
 * claims.ts and the others implementing RecordKind, an entry in batch.ts's KINDS under its item type, and
 * the stream filter's pattern for its records (lib/cloud/stream-filter.ts).
 *
 * What a kind's work may rely on (lib/service/stream/batch.ts says why): the lives of one item come in
 * order, each after the last one's work is done; the lives of other items come in any order, side by
 * side, as they would from other shards. So every decision reads what it decides on (consistently, or
 * the batch's consistent read), and every write is conditional on what it assumes, except the ones that
 * cannot be wrong whenever they land (an offer is a hint).
 */
import type { ItemKey } from '../../domain/objects/records.ts';
import type { ClaimContext } from '../context.ts';
import type { PoolId } from '../../store/keys.ts';
import type { SlotChange } from '../counts/tally.ts';
import { itemKeyText } from '../../store/table.ts';
import type { BatchReads } from './reads.ts';
import type { StreamMemory } from './memory.ts';
import { lastImage, type KeyRun, type Life } from './records.ts';

/** A pool whose counts and waiting claims the batch must refresh: a slot change, or a recount. */
export interface Touched {
  pool: PoolId;
  change?: SlotChange;
  recount?: boolean;
  /** The pool went: its waiting claims now wait for it to exist (PoolNotFound). */
  removed?: boolean;
  /** The pool's record is in the batch: its counts are read when they are written, not from the batch's read. */
  changedPool?: boolean;
}

/** The batch as every kind sees it: its reads, and the other items' runs. */
export interface Batch {
  ctx: ClaimContext;
  reads: BatchReads;
  /** The run of an item in this batch, if it has one. */
  runOf(key: ItemKey): KeyRun | undefined;
  /** What this instance remembers from earlier batches (memory.ts): facts only, never a state. */
  memory: StreamMemory;
}

export interface RecordKind {
  /**
   * Asks for what the life's work will read (batch.reads.want), and names the pools its work will touch
   * and the slots it will change as far as the images tell (the batch reads their counts and summaries).
   */
  reads(batch: Batch, run: KeyRun, life: Life): { pools?: PoolId[]; slots?: Touched[] } | void;
  /** The life's work; the pools it touched (a recount, a pool gone). */
  work(batch: Batch, run: KeyRun, life: Life): Promise<Touched[]>;
  /**
   * The slots the life changes in its pool's summaries, once the whole batch's work is done: from the
   * item as the store holds it then (the batch's consistent read, read again when the batch wrote it).
   */
  slots?(batch: Batch, run: KeyRun, life: Life): Promise<Touched[]>;
}

/**
 * The item where the batch's records leave it: its last life's last image, and whether that life ended
 * with a REMOVE. Undefined when the batch has no record of it. (A hint, as an eventual read is: the item
 * may have changed since, and that change has a record of its own.)
 */
export function latestIn(
  batch: Batch,
  key: ItemKey,
): { image: Record<string, unknown>; removed: boolean } | undefined {
  const life = batch.runOf(key)?.lives.at(-1);
  if (!life) return undefined;
  return { image: lastImage(life), removed: life.after === undefined };
}

/**
 * Whether the claim at `key` with this uid is known gone: the batch holds its REMOVE, or an earlier batch
 * of this instance did (memory.ts; a claim's uid never comes back).
 */
export function removedIn(batch: Batch, key: ItemKey, uid: string): boolean {
  return (
    batch.memory.isClaimRemoved(key, uid) ||
    (batch.runOf(key)?.lives ?? []).some(
      (life) => (life.removed as { metadata?: { uid?: string } } | undefined)?.metadata?.uid === uid,
    )
  );
}

export function sameKey(a: ItemKey | undefined, b: ItemKey | undefined): boolean {
  return a !== undefined && b !== undefined && itemKeyText(a) === itemKeyText(b);
}
