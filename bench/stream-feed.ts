/**
 * One shard of the table's stream, as the stream benchmark delivers it (bench/stream.ts): every committed
 * change of the store (bench/store.ts forwards them), filtered with the deployed mapping's patterns
 * (lib/cloud/stream-filter.ts), kept until `deliver` hands them to a stream handler in batches of up to
 * 100, each batch retried from its first reported failure.
 *
 * With a parallelization factor above 1 the shard's records are spread over that many lanes by item key
 * (pk and sk): each lane has one batch in flight, the lanes run side by side. That is the least the event
 * source mapping promises ("in-order processing at the item (partition and sort key) level",
 * https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html), so records of two items may meet in no
 * set order, as they may in AWS.
 */
import { performance } from 'node:perf_hooks';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { matchesFilter } from '../lib/cloud/stream-filter.ts';
import { streamRecordOf } from '../lib/local/stream/emulation.ts';
import type { ItemChange } from '../lib/local/store/dynalite.ts';
import { shardOf } from '../lib/store/keys.ts';
import type { StoreThread } from './store.ts';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

const BATCH_SIZE = 100;
const MAX_ATTEMPTS = 6;

export interface Delivery {
  records: number;
  batches: number;
  /** Wall time from the first batch to the last answer. */
  ms: number;
  /** Records that failed every attempt (none expected). */
  failed: number;
}

export class ShardFeed {
  private readonly lanes: DynamoDBRecord[][];
  private sequence = 0;
  /** Records captured so far (passed by the filter). */
  captured = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: StoreThread,
    private readonly tableName: string,
    lanes: number,
  ) {
    this.lanes = Array.from({ length: Math.max(1, lanes) }, () => []);
    this.unsubscribe = store.onChange((change) => this.take(change));
  }

  private take(change: ItemChange): void {
    if (change.tableName !== this.tableName) return;
    const number = String(++this.sequence).padStart(21, '0');
    const record = streamRecordOf(change, { eventID: `bench-${number}`, sequence: number, stream: 'bench' });
    if (!matchesFilter(record)) return;
    this.captured++;
    const keys = record.dynamodb!.Keys as Record<string, { S?: string }>;
    this.lanes[shardOf(`${keys.pk?.S}\u0000${keys.sk?.S}`, this.lanes.length)]!.push(record);
  }

  get pending(): number {
    return this.lanes.reduce((sum, lane) => sum + lane.length, 0);
  }

  /** Throws away what is pending (records of a setup step nobody measures). */
  async discard(): Promise<void> {
    await this.store.caughtUp();
    for (const lane of this.lanes) lane.length = 0;
  }

  /** Delivers until nothing is pending, the handler's own writes' records included. */
  async deliver(handler: StreamHandler): Promise<Delivery> {
    const started = performance.now();
    const result: Delivery = { records: 0, batches: 0, ms: 0, failed: 0 };
    for (;;) {
      await this.store.caughtUp();
      if (this.pending === 0) break;
      await Promise.all(this.lanes.map((lane) => this.drainLane(lane, handler, result)));
    }
    result.ms = performance.now() - started;
    return result;
  }

  private async drainLane(lane: DynamoDBRecord[], handler: StreamHandler, result: Delivery) {
    let attempts = 0;
    while (lane.length > 0) {
      const batch = lane.slice(0, BATCH_SIZE);
      let done = batch.length;
      try {
        const response = await handler({ Records: batch });
        const failed = new Set((response?.batchItemFailures ?? []).map((item) => item.itemIdentifier));
        const first = batch.findIndex((record) => failed.has(record.dynamodb!.SequenceNumber!));
        if (first >= 0) done = first;
      } catch {
        done = 0;
      }
      result.batches++;
      if (done === 0 && ++attempts >= MAX_ATTEMPTS) {
        result.failed++;
        done = 1;
      }
      if (done > 0) attempts = 0;
      result.records += done;
      lane.splice(0, done);
    }
  }

  close(): void {
    this.unsubscribe();
  }
}
