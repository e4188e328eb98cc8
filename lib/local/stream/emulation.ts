/**
 * A local emulation of DynamoDB Streams and Lambda's event source mapping, for `npm start` and the tests.
 * It is an emulation, not the service: timing is compressed. With a journal (a data folder), every record
 * is kept durably before its write lands (lib/local/stream/journal.ts) until the handler has succeeded on it,
 * and a restart delivers what was left, first, in order per key; without one (`:memory:`) records live in
 * memory only. What it keeps from the real thing:
 * - records in commit order per item key, spread over shards by partition key (one shard unless asked:
 *   a small table's stream has one);
 * - the event filter patterns of the deployed mapping (lib/cloud/stream-filter.ts), applied before batching;
 * - the mapping's concurrent batches per shard (lib/cloud/stream-mapping.ts, parallelizationFactor): a
 *   shard's records spread over that many lanes by item key, each lane with one batch in flight, which
 *   keeps what Lambda keeps ("in-order processing at the item (partition and sort key) level") and no
 *   more: records of two items meet in no set order;
 * - batches of up to 100 records, delivered once a lane has that many or its batching window is over;
 * - ReportBatchItemFailures: a batch that reports a failure is retried from the first failed record,
 *   a bounded number of times, then that record goes to the on-failure list (the deployed DLQ).
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { Image, ItemChange } from '../store/dynalite.ts';
import type { RecoveredRecord, StreamJournal } from './journal.ts';
import { matchesFilter, STREAM_FILTER_PATTERNS, type FilterPattern } from '../../cloud/stream-filter.ts';
import { STREAM_MAPPING } from '../../cloud/stream-mapping.ts';
import { TABLE_PARTITION_KEY, TABLE_SORT_KEY } from '../../store/schema.ts';
import { shardOf } from '../../store/keys.ts';
import { withTtlIdentity } from '../store/ttl.ts';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface LocalStreamOptions {
  handler: StreamHandler;
  shards?: number;
  /** Batches of one shard in flight at once (the deployed mapping's, unless given). */
  parallelizationFactor?: number;
  batchSize?: number;
  /** How long a shard waits for more records before it delivers a batch, in ms. */
  batchWindowMs?: number;
  maxRetries?: number;
  filters?: readonly FilterPattern[];
  onFailure?: (record: DynamoDBRecord, error?: unknown) => void;
  /** Keeps records durably until handled (a data folder's journal); absent: memory only. */
  journal?: StreamJournal;
}

/**
 * How long a local shard gathers records before it delivers them (the deployed mapping waits up to
 * `maxBatchingWindowSeconds`): short, so `npm start` answers within a moment, and long enough that a
 * claim's own records (written a few ms apart) usually share a batch.
 */
export const LOCAL_BATCH_WINDOW_MS = 20;

/** One of a shard's concurrent batches: its records (by item key), one batch of them in flight. */
interface Lane {
  id: string;
  pending: DynamoDBRecord[];
  busy: boolean;
  timer?: NodeJS.Timeout;
  attempts: number;
}

/**
 * A committed change (from the local store) as Lambda hands a DynamoDB stream record to the function:
 * NEW_AND_OLD_IMAGES, keys from the image. Used by the emulation and by tests that deliver by hand.
 */
export function streamRecordOf(
  change: ItemChange,
  at: { eventID: string; sequence: string; stream: string },
): DynamoDBRecord {
  const image = change.newImage ?? change.oldImage!;
  return withTtlIdentity(change.tableName, {
    eventID: at.eventID,
    eventName: change.oldImage ? (change.newImage ? 'MODIFY' : 'REMOVE') : 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'local',
    eventSourceARN: `arn:aws:dynamodb:local:000000000000:table/${change.tableName}/stream/${at.stream}`,
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: {
        [TABLE_PARTITION_KEY]: image[TABLE_PARTITION_KEY]!,
        [TABLE_SORT_KEY]: image[TABLE_SORT_KEY]!,
      } as never,
      ...(change.newImage ? { NewImage: change.newImage as never } : {}),
      ...(change.oldImage ? { OldImage: change.oldImage as never } : {}),
      SequenceNumber: at.sequence,
      SizeBytes: JSON.stringify(image).length,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  });
}

const keyOf = (image: Image) => JSON.stringify([image[TABLE_PARTITION_KEY], image[TABLE_SORT_KEY]]);

/** Whether a journaled record's write landed: the item is now (`now`) as the record left it. */
function landed(record: DynamoDBRecord, now: Image | undefined): boolean {
  const after = record.dynamodb!.NewImage as Image | undefined;
  if (!after) return now === undefined;
  return now !== undefined && canonical(now) === canonical(after);
}

/** JSON with object keys sorted, so two images compare by content. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

export class LocalStream {
  /** Per shard, its lanes. */
  private readonly shards: Lane[][];
  private sequence = 0;
  /** Record ids must not repeat across restarts of a persistent store (the stream function keys on them). */
  private readonly run = randomUUID();
  private readonly options: Required<Omit<LocalStreamOptions, 'onFailure' | 'journal'>> &
    Pick<LocalStreamOptions, 'onFailure' | 'journal'>;
  /** Per item key, the journaled record of the write in progress (dynalite writes one key at a time). */
  private readonly inflight = new Map<string, DynamoDBRecord>();
  private idleWaiters: (() => void)[] = [];
  /** Records that exhausted their retries (the deployed stack sends them to an SQS queue). */
  readonly failed: DynamoDBRecord[] = [];
  /** Batches delivered, for tests and logs. */
  delivered = 0;
  private stopped = false;

  constructor(options: LocalStreamOptions) {
    this.options = {
      // One shard, as a small table's stream has; the mapping's concurrent batches spread it by item.
      shards: 1,
      parallelizationFactor: STREAM_MAPPING.parallelizationFactor,
      batchSize: STREAM_MAPPING.batchSize,
      batchWindowMs: LOCAL_BATCH_WINDOW_MS,
      maxRetries: STREAM_MAPPING.retryAttempts,
      filters: STREAM_FILTER_PATTERNS,
      ...options,
    };
    this.shards = Array.from({ length: this.options.shards }, (_, i) =>
      Array.from({ length: Math.max(1, this.options.parallelizationFactor) }, (_, lane) => ({
        id: `shardId-local-${i}/${lane}`,
        pending: [],
        busy: false,
        attempts: 0,
      })),
    );
    if (options.journal) this.sequence = Number(options.journal.lastSequence());
  }

  private recordOf(change: ItemChange): DynamoDBRecord {
    const sequence = String(++this.sequence).padStart(21, '0');
    return streamRecordOf(change, { eventID: `local-${this.run}-${sequence}`, sequence, stream: 'local' });
  }

  /**
   * Keeps a change's record durably before its write lands (the store's write-ahead hook). Resolves once
   * the journal holds it; rejects (and the write fails, unacknowledged) when the journal cannot.
   */
  keep(change: ItemChange): Promise<void> {
    const journal = this.options.journal;
    if (!journal) return Promise.resolve();
    const key = keyOf(change.newImage ?? change.oldImage!);
    // A record journaled for this key whose write never landed (it failed after the journal): void.
    const stale = this.inflight.get(key);
    if (stale) {
      this.inflight.delete(key);
      journal.done([stale.dynamodb!.SequenceNumber!]);
    }
    const record = this.recordOf(change);
    if (!matchesFilter(record, this.options.filters)) return Promise.resolve();
    this.inflight.set(key, record);
    return journal.append(record);
  }

  /** Takes one committed change (from the local store) as a stream record. */
  push(change: ItemChange): void {
    if (this.stopped) return;
    const key = keyOf(change.newImage ?? change.oldImage!);
    const kept = this.inflight.get(key);
    let record: DynamoDBRecord;
    if (kept) {
      this.inflight.delete(key);
      this.options.journal!.commit([kept.dynamodb!.SequenceNumber!]);
      record = kept;
    } else {
      if (this.options.journal) return; // filtered out when it was kept
      record = this.recordOf(change);
      if (!matchesFilter(record, this.options.filters)) return;
    }
    this.enqueue(record);
  }

  private enqueue(record: DynamoDBRecord): void {
    const keys = record.dynamodb!.Keys!;
    const pk = String(Object.values(keys[TABLE_PARTITION_KEY]!)[0]);
    const sk = String(Object.values(keys[TABLE_SORT_KEY]!)[0]);
    const lanes = this.shards[shardOf(pk, this.shards.length)]!;
    const lane = lanes[shardOf(`${pk}\u0000${sk}`, lanes.length)]!;
    lane.pending.push(record);
    this.schedule(lane);
  }

  private get lanes(): Lane[] {
    return this.shards.flat();
  }

  /**
   * Sorts the records a journal kept from before a restart: a record whose write may not have landed is
   * kept only when the item is now as the record says (`current` reads it); otherwise its write never
   * happened, and it is dropped (done in the journal) and returned apart, so the caller can mend what
   * dynalite wrote of it (its index entries are written before the item).
   */
  async sortRecovered(
    records: readonly RecoveredRecord[],
    current: (keys: Image) => Promise<Image | undefined>,
  ): Promise<{ landed: DynamoDBRecord[]; dropped: { record: DynamoDBRecord; current?: Image }[] }> {
    const kept: DynamoDBRecord[] = [];
    const dropped: { record: DynamoDBRecord; current?: Image }[] = [];
    for (const { record, committed } of records) {
      if (committed) {
        kept.push(record);
        continue;
      }
      const now = await current(record.dynamodb!.Keys as Image);
      if (landed(record, now)) kept.push(record);
      else dropped.push({ record, current: now });
    }
    this.options.journal?.done(dropped.map(({ record }) => record.dynamodb!.SequenceNumber!));
    return { landed: kept, dropped };
  }

  /** Delivers recovered records ahead of any new one, in journal order (commit order per key). */
  replay(records: readonly DynamoDBRecord[]): void {
    for (const record of records) this.enqueue(record);
  }

  private schedule(lane: Lane, delay = this.options.batchWindowMs): void {
    if (lane.busy || lane.pending.length === 0 || this.stopped) return;
    // A full batch goes at once (unless it is being retried), as Lambda invokes on a full batch.
    const full = lane.pending.length >= this.options.batchSize && lane.attempts === 0;
    if (lane.timer && !full) return;
    if (lane.timer) clearTimeout(lane.timer);
    lane.timer = setTimeout(
      () => {
        lane.timer = undefined;
        void this.deliver(lane);
      },
      full ? 0 : delay,
    );
  }

  private async deliver(lane: Lane): Promise<void> {
    lane.busy = true;
    const batch = lane.pending.slice(0, this.options.batchSize);
    let done = batch.length;
    let error: unknown;
    try {
      const response = await this.options.handler({ Records: batch });
      const failedIds = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      const firstFailed = batch.findIndex((record) => failedIds.has(record.dynamodb!.SequenceNumber!));
      if (firstFailed >= 0) done = firstFailed;
    } catch (thrown) {
      error = thrown;
      done = 0;
    }
    this.delivered++;
    if (this.stopped && done < batch.length) {
      // Stopping: a batch cut off (its store closing under it) is not judged; the journal keeps what
      // was not done for the next start, as after a crash, rather than count it a failure.
      this.options.journal?.done(batch.slice(0, done).map((record) => record.dynamodb!.SequenceNumber!));
      lane.pending.splice(0, done);
      lane.busy = false;
      return;
    }
    if (done === batch.length) lane.attempts = 0;
    else if (++lane.attempts > this.options.maxRetries) {
      // Retries exhausted: the record goes to the on-failure list and the lane moves on.
      const record = batch[done]!;
      this.failed.push(record);
      this.options.onFailure?.(record, error);
      done++;
      lane.attempts = 0;
    }
    this.options.journal?.done(batch.slice(0, done).map((record) => record.dynamodb!.SequenceNumber!));
    lane.pending.splice(0, done);
    lane.busy = false;
    this.schedule(lane, lane.attempts > 0 ? 50 * lane.attempts : this.options.batchWindowMs);
    this.notifyIdle();
  }

  private get idle(): boolean {
    return this.lanes.every((lane) => !lane.busy && lane.pending.length === 0);
  }

  private notifyIdle(): void {
    if (!this.idle) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves when every record so far (and every record their handling wrote) has been delivered. */
  async drained(): Promise<void> {
    for (;;) {
      if (this.idle) {
        // One more turn, so writes made by the last batch have been pushed.
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (this.idle) return;
      }
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  /** Stops delivering; resolves once the batches in flight have finished (so the store can close). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const lane of this.lanes) if (lane.timer) clearTimeout(lane.timer);
    while (this.lanes.some((lane) => lane.busy)) await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
