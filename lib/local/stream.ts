/**
 * A local emulation of DynamoDB Streams and Lambda's event source mapping, for `npm start` and the tests.
 * It is an emulation, not the service: timing is compressed. With a journal (a data folder), every record
 * is kept durably before its write lands (lib/local/journal.ts) until the handler has succeeded on it,
 * and a restart delivers what was left, first, in order per key; without one (`:memory:`) records live in
 * memory only. What it keeps from the real thing:
 * - records in commit order per item key, spread over shards by partition key;
 * - the event filter patterns of the deployed mapping (lib/cloud/stream-filter.ts), applied before batching;
 * - batches of up to 100 records per shard, one batch in flight per shard;
 * - ReportBatchItemFailures: a batch that reports a failure is retried from the first failed record,
 *   a bounded number of times, then that record goes to the on-failure list (the deployed DLQ).
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { Image, ItemChange } from './store.ts';
import type { RecoveredRecord, StreamJournal } from './journal.ts';
import { matchesFilter, STREAM_FILTER_PATTERNS, type FilterPattern } from '../cloud/stream-filter.ts';
import { TABLE_PARTITION_KEY, TABLE_SORT_KEY } from '../store/schema.ts';
import { shardOf } from '../store/keys.ts';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface LocalStreamOptions {
  handler: StreamHandler;
  shards?: number;
  batchSize?: number;
  /** How long a shard waits for more records before it delivers a batch, in ms. */
  batchWindowMs?: number;
  maxRetries?: number;
  filters?: readonly FilterPattern[];
  onFailure?: (record: DynamoDBRecord, error?: unknown) => void;
  /** Keeps records durably until handled (a data folder's journal); absent: memory only. */
  journal?: StreamJournal;
}

interface Shard {
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
  return {
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
  };
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
  private readonly shards: Shard[];
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
      shards: 4,
      batchSize: 100,
      batchWindowMs: 20,
      maxRetries: 5,
      filters: STREAM_FILTER_PATTERNS,
      ...options,
    };
    this.shards = Array.from({ length: this.options.shards }, (_, i) => ({
      id: `shardId-local-${i}`,
      pending: [],
      busy: false,
      attempts: 0,
    }));
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
    const shard =
      this.shards[shardOf(String(Object.values(keys[TABLE_PARTITION_KEY]!)[0]), this.shards.length)]!;
    shard.pending.push(record);
    this.schedule(shard);
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

  private schedule(shard: Shard, delay = this.options.batchWindowMs): void {
    if (shard.busy || shard.timer || shard.pending.length === 0 || this.stopped) return;
    shard.timer = setTimeout(() => {
      shard.timer = undefined;
      void this.deliver(shard);
    }, delay);
  }

  private async deliver(shard: Shard): Promise<void> {
    shard.busy = true;
    const batch = shard.pending.slice(0, this.options.batchSize);
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
      shard.pending.splice(0, done);
      shard.busy = false;
      return;
    }
    if (done === batch.length) shard.attempts = 0;
    else if (++shard.attempts > this.options.maxRetries) {
      // Retries exhausted: the record goes to the on-failure list and the shard moves on.
      const record = batch[done]!;
      this.failed.push(record);
      this.options.onFailure?.(record, error);
      done++;
      shard.attempts = 0;
    }
    this.options.journal?.done(batch.slice(0, done).map((record) => record.dynamodb!.SequenceNumber!));
    shard.pending.splice(0, done);
    shard.busy = false;
    this.schedule(shard, shard.attempts > 0 ? 50 * shard.attempts : this.options.batchWindowMs);
    this.notifyIdle();
  }

  private get idle(): boolean {
    return this.shards.every((shard) => !shard.busy && shard.pending.length === 0);
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
    for (const shard of this.shards) if (shard.timer) clearTimeout(shard.timer);
    while (this.shards.some((shard) => shard.busy)) await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
