/**
 * Lambda's DynamoDB event source mapping, played over the real DynamoDB Streams API (for DynamoDB Local,
 * lib/local/stores.ts): what the deployed stack's mapping does, in this process.
 *
 * - DescribeStream lists the shards; a shard is read only once its parent is read to its end, so a key's
 *   records keep their order across a split (lib/local/stream/records.ts);
 * - GetShardIterator / GetRecords per shard, shards side by side; the mapping's concurrent batches per
 *   shard (lib/cloud/stream-mapping.ts): a shard's records spread over that many lanes by item key, one
 *   batch in flight per lane, so an item's records stay in order (as Lambda keeps them) and two items'
 *   meet in no set order; the checkpoint passes a record once it and every record before it are done;
 * - the mapping's filter patterns (lib/cloud/stream-filter.ts) decide what reaches the function; a record
 *   they drop is done with;
 * - batches of up to 100 records; ReportBatchItemFailures: the batch is retried from its first failed
 *   record; a batch whose function throws is split in two (BisectBatchOnFunctionError) until the failing
 *   record is alone; a record that fails more than `maxRetries` times goes to the on-failure list (the
 *   deployed stack's SQS queue) and the shard moves on;
 * - a checkpoint per shard (lib/local/stream/checkpoints.ts), so a restart resumes where it stopped.
 *
 * This is the one place that knows the records come from DynamoDB Local: it repairs the empty maps that
 * DynamoDB Local 3.x writes without their tag (`repairEmptyMaps`).
 */
import {
  DescribeStreamCommand,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ResourceNotFoundException,
  TrimmedDataAccessException,
  type DynamoDBStreamsClient,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { matchesFilter, STREAM_FILTER_PATTERNS, type FilterPattern } from '../../cloud/stream-filter.ts';
import { STREAM_MAPPING } from '../../cloud/stream-mapping.ts';
import { shardOf } from '../../store/keys.ts';
import { Checkpoints } from './checkpoints.ts';
import { lambdaRecordOf, readableShards } from './records.ts';
import { tableOfRecord, withTtlIdentity } from '../store/ttl.ts';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface StreamConsumerOptions {
  client: DynamoDBStreamsClient;
  streamArn: string;
  handler: StreamHandler;
  /** The mapping's filter patterns; `'none'` passes every record (a tap that sees every change). */
  filters?: readonly FilterPattern[] | 'none';
  batchSize?: number;
  /** Batches of one shard in flight at once (the deployed mapping's, unless given). */
  parallelizationFactor?: number;
  maxRetries?: number;
  /** BisectBatchOnFunctionError (default true); false retries a failing batch whole, from its first record. */
  bisect?: boolean;
  /** How long a shard with nothing new waits before it asks again, in ms (Lambda polls 4 times a second). */
  pollMs?: number;
  /** The checkpoint file; none keeps checkpoints in memory. */
  checkpointFile?: string;
  /**
   * Where records that exhausted their retries are appended, one JSON line each (the deployed stack's
   * on-failure queue, kept across restarts); none keeps them in `failed` only.
   */
  onFailureFile?: string;
  onFailure?: (record: DynamoDBRecord, error?: unknown) => void;
}

/** One record read from a shard: to deliver (in its lane), or (filtered out) only to pass. */
interface Entry {
  sequence: string;
  record?: DynamoDBRecord;
  lane: number;
  /** Delivered (or given up on): the checkpoint may pass it. */
  done?: boolean;
}

/** One of a shard's concurrent batches. */
interface LaneState {
  /** Failed deliveries in a row starting at the lane's first pending record. */
  attempts: number;
  /** After a batch threw: the next batch is at most this large (bisection). */
  limit: number;
}

interface ShardState {
  id: string;
  iterator?: string;
  /** Read to its end (no next iterator). */
  closed: boolean;
  /** Read and not yet passed by the checkpoint, in shard order. */
  pending: Entry[];
  lanes: LaneState[];
  /** The last record read, to ask for a fresh iterator after it. */
  readThrough?: string;
  /** The stream was trimmed past the checkpoint: start again at the oldest record kept. */
  trimmed?: boolean;
}

const GET_RECORDS_LIMIT = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DESCRIBE_EVERY_MS = 1000;

export class StreamConsumer {
  /** Records that exhausted their retries. */
  readonly failed: DynamoDBRecord[] = [];
  /** Batches handed to the function. */
  delivered = 0;
  private readonly options: Required<
    Omit<StreamConsumerOptions, 'checkpointFile' | 'onFailureFile' | 'onFailure'>
  > &
    Pick<StreamConsumerOptions, 'onFailureFile' | 'onFailure'>;
  private readonly checkpoints: Checkpoints;
  private readonly shards = new Map<string, ShardState>();
  private listed: Shard[] = [];
  private describedAt = 0;
  private stopped = false;
  private wake?: () => void;
  private loop?: Promise<void>;
  /** Rounds so far (a round reads and delivers once on every readable shard). */
  private rounds = 0;
  private idleWaiters: { after: number; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private lastError?: unknown;

  constructor(options: StreamConsumerOptions) {
    this.options = {
      filters: STREAM_FILTER_PATTERNS,
      batchSize: STREAM_MAPPING.batchSize,
      parallelizationFactor: STREAM_MAPPING.parallelizationFactor,
      maxRetries: STREAM_MAPPING.retryAttempts,
      bisect: true,
      pollMs: 50,
      ...options,
    };
    this.checkpoints = new Checkpoints(options.streamArn, options.checkpointFile);
  }

  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /** Resolves once a full round begun after the call found nothing new (the function's own writes included). */
  drained(): Promise<void> {
    const after = this.rounds;
    return new Promise((resolve, reject) => {
      this.idleWaiters.push({ after, resolve, reject });
      this.wake?.();
    });
  }

  /** Stops reading; resolves once the batch in flight has finished and its checkpoint is written. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    for (const waiter of this.idleWaiters) waiter.reject(new Error('the stream consumer stopped'));
    this.idleWaiters = [];
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const round = ++this.rounds;
      let busy = false;
      let failed = false;
      try {
        await this.describe();
        const shards = readableShards(this.listed, this.checkpoints.finished());
        const results = await Promise.all(shards.map((shard) => this.step(this.stateOf(shard.ShardId!))));
        busy = results.some(Boolean);
        this.lastError = undefined;
      } catch (error) {
        // The store went away or answered oddly: try again after a pause, as the mapping would.
        busy = failed = true;
        if (!this.stopped && String(error) !== String(this.lastError)) {
          console.error('stream consumer: reading the stream failed; retrying', error);
        }
        this.lastError = error;
      }
      if (!busy) {
        // Nothing to read nor deliver on any shard: every waiter from before this round is drained.
        this.idleWaiters = this.idleWaiters.filter((waiter) => {
          if (waiter.after >= round) return true;
          waiter.resolve();
          return false;
        });
      }
      if (!this.stopped && (failed || !busy)) await this.pause(failed ? 500 : this.options.pollMs);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  /** Lists the shards now and then, and at once when one was read to its end (its children may start). */
  private async describe(): Promise<void> {
    const due = Date.now() - this.describedAt >= DESCRIBE_EVERY_MS || this.listed.length === 0;
    const closed = [...this.shards.values()].some((shard) => shard.closed && shard.pending.length === 0);
    if (!due && !closed) return;
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const { StreamDescription } = await this.options.client.send(
        new DescribeStreamCommand({ StreamArn: this.options.streamArn, ExclusiveStartShardId: start }),
      );
      shards.push(...(StreamDescription?.Shards ?? []));
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
    this.listed = shards;
    this.describedAt = Date.now();
    const ids = new Set(shards.map((shard) => shard.ShardId!));
    for (const [id, shard] of this.shards) {
      if (shard.closed && shard.pending.length === 0) {
        this.checkpoints.finish(id);
        this.shards.delete(id);
      } else if (!ids.has(id)) this.shards.delete(id);
    }
    this.checkpoints.keepOnly(ids);
  }

  private stateOf(id: string): ShardState {
    let shard = this.shards.get(id);
    if (!shard) {
      const lanes = Math.max(1, this.options.parallelizationFactor);
      shard = {
        id,
        closed: false,
        pending: [],
        lanes: Array.from({ length: lanes }, () => ({ attempts: 0, limit: this.options.batchSize })),
      };
      this.shards.set(id, shard);
    }
    return shard;
  }

  /** Reads what is new on a shard and delivers one batch; says whether there was anything to do. */
  private async step(shard: ShardState): Promise<boolean> {
    const read = await this.read(shard);
    const delivered = await this.deliver(shard);
    return read || delivered;
  }

  private async read(shard: ShardState): Promise<boolean> {
    if (shard.closed || shard.pending.length >= this.options.batchSize * shard.lanes.length) return false;
    shard.iterator ??= await this.iteratorFor(shard);
    if (!shard.iterator) return false;
    let answer;
    try {
      answer = await this.options.client.send(
        new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: GET_RECORDS_LIMIT }),
      );
    } catch (error) {
      if (error instanceof ExpiredIteratorException) {
        shard.iterator = undefined; // the next round asks for a fresh one after the last record read
        return true;
      }
      if (error instanceof TrimmedDataAccessException || error instanceof ResourceNotFoundException) {
        shard.iterator = undefined;
        shard.readThrough = undefined;
        shard.trimmed = true;
        if (error instanceof ResourceNotFoundException) shard.closed = true;
        return true;
      }
      throw error;
    }
    shard.iterator = answer.NextShardIterator;
    if (!shard.iterator) shard.closed = true;
    const filters = this.options.filters;
    for (const streamRecord of answer.Records ?? []) {
      const record = lambdaRecordOf(streamRecord, this.options.streamArn);
      const sequence = record.dynamodb!.SequenceNumber!;
      const passes = filters === 'none' || matchesFilter(record, filters);
      const keys = streamRecord.dynamodb?.Keys ?? {};
      const lane = shardOf(`${keys.pk?.S}\u0000${keys.sk?.S}`, shard.lanes.length);
      shard.pending.push({ sequence, lane, ...(passes && { record }) });
      shard.readThrough = sequence;
    }
    return (answer.Records?.length ?? 0) > 0 || shard.closed;
  }

  private async iteratorFor(shard: ShardState): Promise<string | undefined> {
    const after = shard.readThrough ?? (shard.trimmed ? undefined : this.checkpoints.sequenceOf(shard.id));
    const { ShardIterator } = await this.options.client.send(
      new GetShardIteratorCommand({
        StreamArn: this.options.streamArn,
        ShardId: shard.id,
        ...(after
          ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }
          : { ShardIteratorType: 'TRIM_HORIZON' }),
      }),
    );
    return ShardIterator;
  }

  /** Delivers the next batch of each lane of the shard, side by side; says whether it did anything. */
  private async deliver(shard: ShardState): Promise<boolean> {
    const passed = this.passDone(shard);
    const delivered = await Promise.all(shard.lanes.map((lane, i) => this.deliverLane(shard, lane, i)));
    const passedAfter = this.passDone(shard);
    return passed || passedAfter || delivered.some(Boolean);
  }

  private async deliverLane(shard: ShardState, lane: LaneState, index: number): Promise<boolean> {
    const entries: Entry[] = [];
    for (const entry of shard.pending) {
      if (entries.length >= Math.min(lane.limit, this.options.batchSize)) break;
      if (entry.lane === index && entry.record && !entry.done) entries.push(entry);
    }
    if (entries.length === 0) return false;
    // The expirer's deletes carry TTL's identity, as the deployed stream's would (lib/local/store/ttl.ts).
    const batch = entries.map((entry) => withTtlIdentity(tableOfRecord(entry.record!), entry.record!));
    if (lane.attempts > 0) await sleep(Math.min(1000, 50 * lane.attempts));
    let done = batch.length;
    let error: unknown;
    let threw = false;
    try {
      const response = await this.options.handler({ Records: batch });
      const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      const first = batch.findIndex((record) => failed.has(record.dynamodb!.SequenceNumber!));
      if (first >= 0) done = first;
    } catch (thrown) {
      error = thrown;
      threw = true;
      done = 0;
    }
    this.delivered++;
    // Stopping: a batch cut off (its store closing under it) is not judged; the next start retries it
    // from the checkpoint, as after a crash, rather than count it a failure or send it to the list.
    if (this.stopped && done < batch.length) {
      for (const entry of entries.slice(0, done)) entry.done = true;
      this.passDone(shard);
      return true;
    }
    if (done > 0) {
      for (const entry of entries.slice(0, done)) entry.done = true;
      lane.attempts = 0;
      lane.limit = this.options.batchSize;
    } else if (threw && batch.length > 1 && this.options.bisect) {
      // BisectBatchOnFunctionError: halve the batch until the record that fails is alone.
      lane.limit = Math.ceil(batch.length / 2);
    } else if (++lane.attempts > this.options.maxRetries) {
      // Retries exhausted: the record goes to the on-failure list and the lane moves on.
      this.giveUp(batch[0]!, error);
      entries[0]!.done = true;
      lane.attempts = 0;
      lane.limit = this.options.batchSize;
    }
    return true;
  }

  private giveUp(record: DynamoDBRecord, error: unknown): void {
    this.failed.push(record);
    if (this.options.onFailureFile) {
      mkdirSync(dirname(this.options.onFailureFile), { recursive: true });
      const reason = error === undefined ? 'reported failed' : String(error);
      appendFileSync(
        this.options.onFailureFile,
        `${JSON.stringify({ at: new Date().toISOString(), reason, record })}\n`,
      );
    }
    this.options.onFailure?.(record, error);
  }

  /**
   * Drops the records at the front of the shard that are done or that the filters passed over, and
   * checkpoints past them: a record is passed only once every record before it is.
   */
  private passDone(shard: ShardState): boolean {
    let count = 0;
    while (count < shard.pending.length && (!shard.pending[count]!.record || shard.pending[count]!.done))
      count++;
    if (count === 0) return false;
    const last = shard.pending.splice(0, count).at(-1)!;
    this.checkpoints.advance(shard.id, last.sequence);
    return true;
  }
}
