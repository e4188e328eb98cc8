/**
 * The table's stream as the history function's mapping delivers it, for tests of the history
 * (test/integration/history.test.ts, test/model/watch-once.test.ts).
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { HISTORY_FILTER_PATTERNS, matchesFilter } from '../../lib/cloud/stream-filter.ts';
import type { Resource } from '../../lib/domain/kinds.ts';
import { changesOf, type HistoryEvent } from '../../lib/domain/lists/watch.ts';
import type { AllotStore } from '../../lib/local/stores.ts';
import type { HistoryEntry } from '../../lib/store/history.ts';
import { shardOf } from '../../lib/store/keys.ts';
import { Table } from '../../lib/store/table.ts';
import { createHistoryHandler } from '../../functions/history.ts';
import { Faults, faultyClient, HandlerDiedError } from './faults.ts';
import { changeRecord } from './stream-queue.ts';

export const image = (value: unknown) =>
  value ? (unmarshall(value as Record<string, AttributeValue>) as Record<string, unknown>) : undefined;

/**
 * The table's stream as DynamoDB Streams and Lambda's mapping give it to the history function: records
 * on shards by partition key, each shard in commit order; a batch is the front of its shard, one batch
 * per shard at a time, removed only once the handler succeeds (else delivered again from its first
 * record); and, as the truth, every change in commit order. Routed `by: 'item'`, the "shards" are a
 * mapping's concurrent batches of one shard (parallelizationFactor > 1, the stream function's lanes):
 * records spread by item key, so two items of one partition key meet in no set order, and only each
 * item's own records keep theirs ("in-order processing at the item (partition and sort key) level").
 */
export class Shards {
  readonly shards: DynamoDBRecord[][];
  readonly busy: boolean[];
  readonly delivered: DynamoDBRecord[][] = [];
  readonly truth: { namespace: string; resource: Resource; event: HistoryEvent }[] = [];
  private sequence = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly feed: Awaited<ReturnType<AllotStore['changes']>>,
    count: number,
    by: 'partition' | 'item' = 'partition',
  ) {
    this.shards = Array.from({ length: count }, () => []);
    this.busy = this.shards.map(() => false);
    this.unsubscribe = feed.onChange((change) => {
      const record = changeRecord(change, ++this.sequence);
      if (!matchesFilter(record, HISTORY_FILTER_PATTERNS)) return;
      this.truth.push(...changesOf(image(record.dynamodb!.OldImage), image(record.dynamodb!.NewImage)));
      const pk = String(Object.values(record.dynamodb!.Keys!.pk!)[0]);
      const sk = String(Object.values(record.dynamodb!.Keys!.sk!)[0]);
      this.shards[shardOf(by === 'item' ? `${pk}\u0000${sk}` : pk, count)]!.push(record);
    });
  }

  close() {
    this.unsubscribe();
  }

  /** DynamoDB Local's feed comes from its Streams API, a moment after the write. */
  caughtUp() {
    return this.feed.caughtUp();
  }

  async deliver(shard: number, size: number, handler: (records: DynamoDBRecord[]) => Promise<void>) {
    await this.caughtUp();
    if (this.busy[shard] || this.shards[shard]!.length === 0) return;
    this.busy[shard] = true;
    const batch = this.shards[shard]!.slice(0, size);
    try {
      await handler(batch);
      this.shards[shard]!.splice(0, batch.length);
      this.delivered.push(batch);
    } catch (error) {
      if (!(error instanceof HandlerDiedError) && !String(error).includes('injected')) throw error;
    } finally {
      this.busy[shard] = false;
    }
  }

  get pending() {
    return this.shards.reduce((sum, shard) => sum + shard.length, 0);
  }
}

/** Every entry of a collection, in order. */
export async function entriesOf(
  table: Table,
  namespace: string,
  resource: Resource,
): Promise<HistoryEntry[]> {
  const all: HistoryEntry[] = [];
  for (let seq = 0; ;) {
    const page = await table.history.after(namespace, resource, seq, 100);
    all.push(...page);
    if (page.length < 100) return all;
    seq = page[page.length - 1]!.seq;
  }
}

/** A history handler of its own (its own instance's memory of heads), on a client with faults. */
export function historyAppender(endpoint: string, tableName: string, random: () => number, rate: number) {
  const faults = new Faults(random);
  faults.rate = rate;
  const table = new Table({ tableName, client: faultyClient(endpoint, faults) });
  const handler = createHistoryHandler({ table });
  return {
    faults,
    table,
    deliver: async (records: DynamoDBRecord[]) => {
      try {
        await handler({ Records: records });
      } finally {
        faults.revive();
      }
    },
  };
}
