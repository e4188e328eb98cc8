/**
 * The dynalite stream, durable (issue 14): with a data folder, every captured change is journaled before
 * its write lands (lib/local/stream/journal.ts) and kept until the stream handler has succeeded on it, so a
 * server killed at any moment delivers, after its restart, what it owed, in order per key. Records that
 * fail past their retries go to `stream-dead-letters.jsonl` (the deployed dead-letter queue); the repair
 * sweep covers their effects. `:memory:` keeps none, as DynamoDB Streams would keep none of a table
 * that is gone.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { StreamJournal } from './journal.ts';
import { localClient, type Image, type LocalStore } from '../store/dynalite.ts';
import { LocalStream, type LocalStreamOptions } from './emulation.ts';
import { HISTORY_MAPPING } from '../../cloud/stream-mapping.ts';

/** Stream records that failed past their retries (the deployed dead-letter queue), one JSON a line. */
export const DEAD_LETTER_FILE = 'stream-dead-letters.jsonl';

/**
 * Starts the emulated stream of one table, journaled in `dataDir` unless it is `:memory:`; `detach`
 * (when the store closes) stops the journaling.
 */
export async function startDynaliteStream(
  store: LocalStore,
  dataDir: string,
  tableName: string,
  options: Pick<LocalStreamOptions, 'handler' | 'onFailure'>,
): Promise<{ feed: LocalStream; detach(): Promise<void> }> {
  const durable = dataDir !== ':memory:';
  const opened = durable ? await StreamJournal.open(dataDir) : undefined;
  const deadLetters = durable ? join(dataDir, DEAD_LETTER_FILE) : undefined;
  const stream = new LocalStream({
    ...options,
    journal: opened?.journal,
    onFailure: (record, error) => {
      options.onFailure?.(record, error);
      if (deadLetters) appendFileSync(deadLetters, `${JSON.stringify(record)}\n`);
    },
  });
  if (opened && opened.pending.length > 0) {
    const client = localClient(store.endpoint);
    try {
      // Before the stream is wired: what recovery writes itself is no change to report.
      const { landed, dropped } = await stream.sortRecovered(opened.pending, (keys) =>
        readItem(client, tableName, keys),
      );
      for (const { record, current } of dropped) await mendIndexes(client, tableName, record, current);
      stream.replay(landed);
      console.error(
        `stream: ${landed.length} record(s) kept from before the restart delivered, ${dropped.length} whose write never landed dropped`,
      );
    } finally {
      client.destroy();
    }
  }
  store.setWriteAhead((change) => (change.tableName === tableName ? stream.keep(change) : Promise.resolve()));
  const unsubscribe = store.onChange((change) => {
    if (change.tableName === tableName) stream.push(change);
  });
  return {
    feed: stream,
    // Writes go on being journaled after the stream stops (as a crash would leave them), until the
    // store itself closes.
    async detach() {
      unsubscribe();
      store.setWriteAhead(undefined);
      await opened?.journal.close();
    },
  };
}

/**
 * A second reader of the emulated stream (the history function): its own filters, fed every committed
 * change as the stream function's reader is, in memory only, a failing batch retried until it succeeds.
 */
export function startSecondReader(
  store: LocalStore,
  tableName: string,
  options: Pick<LocalStreamOptions, 'handler' | 'onFailure'> & {
    reader: { filters: LocalStreamOptions['filters'] };
  },
): { feed: LocalStream; detach(): Promise<void> } {
  const stream = new LocalStream({
    handler: options.handler,
    onFailure: options.onFailure,
    filters: options.reader.filters,
    maxRetries: Infinity,
    parallelizationFactor: HISTORY_MAPPING.parallelizationFactor,
    // As soon as a change commits: a list right after a write then finds it in the history already.
    batchWindowMs: 2,
  });
  const unsubscribe = store.onChange((change) => {
    if (change.tableName === tableName) stream.push(change);
  });
  return { feed: stream, detach: async () => unsubscribe() };
}

async function readItem(client: DynamoDBClient, tableName: string, keys: Image): Promise<Image | undefined> {
  const { Item } = await client.send(
    new GetItemCommand({ TableName: tableName, Key: keys as never, ConsistentRead: true }),
  );
  return Item as Image | undefined;
}

/**
 * dynalite writes an item's index entries before the item: a crash in between leaves the entries of a
 * write that never landed. Writing the intended image and then the current state again (or deleting)
 * makes dynalite put every index entry of the item back in line with the item.
 */
async function mendIndexes(
  client: DynamoDBClient,
  tableName: string,
  record: DynamoDBRecord,
  current: Image | undefined,
): Promise<void> {
  const intended = record.dynamodb!.NewImage as Image | undefined;
  if (intended) await client.send(new PutItemCommand({ TableName: tableName, Item: intended as never }));
  if (current) await client.send(new PutItemCommand({ TableName: tableName, Item: current as never }));
  else
    await client.send(new DeleteItemCommand({ TableName: tableName, Key: record.dynamodb!.Keys as never }));
}
