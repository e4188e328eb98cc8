/**
 * A DynamoDB stream the test delivers by hand: every committed change of one table (the store's change
 * feed, lib/local/stores.ts), filtered with lib/cloud/stream-filter.ts, queued until the test hands a
 * batch to a stream handler.
 *
 * Delivery keeps what DynamoDB Streams and the event source mapping keep (a key's records in commit
 * order, and a key in one batch in flight at a time; a batch that reports a failure is retried from its
 * first failed record) and varies what they do not promise: the order of records of different keys,
 * batch sizes (a bisected batch is two smaller ones), several batches in flight at once (the mapping's
 * parallelization factor), and, when asked, duplicates and replays of batches already delivered.
 */
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { ItemChange } from '../../lib/local/store/dynalite.ts';
import type { ChangeFeed } from '../../lib/local/stores.ts';
import { streamRecordOf } from '../../lib/local/stream/emulation.ts';
import { matchesFilter, STREAM_FILTER_PATTERNS, type FilterPattern } from '../../lib/cloud/stream-filter.ts';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

const keyOf = (record: DynamoDBRecord) => JSON.stringify(record.dynamodb?.Keys);

export function changeRecord(change: ItemChange, sequence: number): DynamoDBRecord {
  const number = String(sequence).padStart(21, '0');
  return streamRecordOf(change, { eventID: `queued-${number}`, sequence: number, stream: 'queued' });
}

export class StreamQueue {
  readonly pending: DynamoDBRecord[] = [];
  /** Batches handed to the handler, for replays. */
  readonly delivered: DynamoDBRecord[][] = [];
  recordsDelivered = 0;
  duplicates = 0;
  replays = 0;
  lost = 0;
  private sequence = 0;
  private readonly unsubscribe: () => void;

  /**
   * `filters`: the mapping's filter patterns (default: the stream function's); `keep`: which records
   * this queue takes at all (a shard's share, when several queues stand for a stream's shards).
   */
  constructor(
    private readonly feed: ChangeFeed,
    filters: readonly FilterPattern[] = STREAM_FILTER_PATTERNS,
    keep: (record: DynamoDBRecord) => boolean = () => true,
  ) {
    this.unsubscribe = feed.onChange((change) => {
      const record = changeRecord(change, ++this.sequence);
      if (matchesFilter(record, filters) && keep(record)) this.pending.push(record);
    });
  }

  /** Numbers the next records past `sequence` (records of another queue handed to this one keep theirs). */
  numberAfter(sequence: number): void {
    this.sequence = Math.max(this.sequence, sequence);
  }

  /** Resolves once every change committed before the call is in `pending` (or filtered out). */
  caughtUp(): Promise<void> {
    return this.feed.caughtUp();
  }

  async close(): Promise<void> {
    this.unsubscribe();
    await this.feed.close();
  }

  /**
   * Takes up to `size` pending records: each pick is any record whose key has no earlier pending record,
   * so records of different keys come in any order and each key's in commit order. Keys in `busy` (in
   * another batch in flight) are left for later.
   */
  private take(size: number, random: () => number, busy: ReadonlySet<string> = new Set()): DynamoDBRecord[] {
    const batch: DynamoDBRecord[] = [];
    while (batch.length < size && this.pending.length > 0) {
      const seen = new Set<string>(busy);
      const eligible: number[] = [];
      this.pending.forEach((record, index) => {
        const key = keyOf(record);
        if (!seen.has(key)) eligible.push(index);
        seen.add(key);
      });
      if (eligible.length === 0) break;
      const index = eligible[Math.floor(random() * eligible.length)]!;
      batch.push(...this.pending.splice(index, 1));
    }
    return batch;
  }

  /**
   * Delivers one batch of up to `size` records, or (`concurrent`) that many batches side by side, no key
   * in two of them (the mapping keeps an item's records in order: one batch of them at a time). Records
   * from the first one the handler reports failed (or all, when it throws) go back to the front of the
   * queue, as the event source mapping retries them.
   */
  async deliver(
    handler: StreamHandler,
    size: number,
    random: () => number,
    options: { duplicate?: boolean; concurrent?: number } = {},
  ): Promise<void> {
    const busy = new Set<string>();
    const batches: DynamoDBRecord[][] = [];
    for (let i = 0; i < (options.concurrent ?? 1); i++) {
      const batch = this.take(size, random, busy);
      if (batch.length === 0) break;
      for (const record of batch) busy.add(keyOf(record));
      batches.push(batch);
    }
    const retries = await Promise.all(batches.map((batch) => this.deliverOne(handler, batch, options)));
    // Each batch's retried records before every pending one (their keys are disjoint: any order of them).
    this.pending.unshift(...retries.flat());
  }

  private async deliverOne(
    handler: StreamHandler,
    batch: DynamoDBRecord[],
    options: { duplicate?: boolean },
  ): Promise<DynamoDBRecord[]> {
    this.delivered.push(batch);
    if (this.delivered.length > 50) this.delivered.shift();
    const event = { Records: options.duplicate ? [...batch, ...batch] : batch };
    if (options.duplicate) this.duplicates += batch.length;
    let retryFrom = batch.length;
    try {
      const response = await handler(event);
      const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      const first = batch.findIndex((record) => failed.has(record.dynamodb!.SequenceNumber!));
      if (first >= 0) retryFrom = first;
    } catch {
      retryFrom = 0;
    }
    this.recordsDelivered += retryFrom;
    return batch.slice(retryFrom);
  }

  /**
   * Loses pending records for good (a record the event source mapping gave up on, or a defect skipped):
   * those `which` picks, or one at random, once the feed has caught up. Resolves to how many were lost.
   */
  async lose(
    which?: (record: DynamoDBRecord) => boolean,
    random: () => number = Math.random,
  ): Promise<number> {
    // What the feed has not passed on yet cannot be picked (DynamoDB Local's feed comes from its Streams API).
    await this.feed.caughtUp();
    if (!which) {
      if (this.pending.length === 0) return 0;
      this.pending.splice(Math.floor(random() * this.pending.length), 1);
      this.lost++;
      return 1;
    }
    const kept = this.pending.filter((record) => !which(record));
    const lost = this.pending.length - kept.length;
    this.pending.splice(0, this.pending.length, ...kept);
    this.lost += lost;
    return lost;
  }

  /** Hands an already delivered batch to the handler again (a replay after a timeout, say). */
  async replay(handler: StreamHandler, random: () => number): Promise<void> {
    const batch = this.delivered[Math.floor(random() * this.delivered.length)];
    if (!batch) return;
    this.replays += batch.length;
    try {
      await handler({ Records: batch });
    } catch {
      // A replay that fails changes nothing the queue tracks.
    }
  }

  /** Delivers until nothing is pending (the handler's own writes included, once the feed has them). */
  async drain(handler: StreamHandler, random: () => number, size = 25): Promise<void> {
    for (let rounds = 0; ; rounds++) {
      await this.feed.caughtUp();
      if (this.pending.length === 0) return;
      if (rounds > 10_000) throw new Error('the stream does not drain: it keeps writing');
      await this.deliver(handler, size, random);
    }
  }
}
