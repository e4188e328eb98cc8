/**
 * The table's connection: the SDK clients, and the two request shapes every store module uses (a
 * conditional write that answers true or false, and a Query read page after page).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { ItemKey } from '../domain/records.ts';
import type { Item } from './items.ts';

/** An item key as one string, for maps of items by key. */
export function itemKeyText(key: ItemKey): string {
  return `${key.pk}\u0000${key.sk}`;
}

/** BatchGetItem's most keys a request. */
const BATCH_GET_KEYS = 100;
/** How often keys left unprocessed are asked for again before the read gives up (and the caller fails). */
const BATCH_GET_ATTEMPTS = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The keys written (or tried) by the calls made inside `trackWrites`, per async context: key → how often. */
const tracked = new AsyncLocalStorage<Map<string, number>>();

/**
 * Runs `work`, counting in `writes` every write it sends through any table (put, update, delete, batch
 * write; landed or not) by key, in its own async context: concurrent work elsewhere is not mixed in. The
 * stream function reads again what its own batch wrote (lib/service/stream/reads.ts).
 */
export function trackWrites<T>(writes: Map<string, number>, work: () => Promise<T>): Promise<T> {
  return tracked.run(writes, work);
}

function noteWrite(command: unknown): void {
  const writes = tracked.getStore();
  if (!writes) return;
  const note = (key: unknown) => {
    if (!key) return;
    const text = itemKeyText(key as ItemKey);
    writes.set(text, (writes.get(text) ?? 0) + 1);
  };
  if (command instanceof PutCommand) note(command.input.Item);
  else if (command instanceof UpdateCommand || command instanceof DeleteCommand) note(command.input.Key);
  else if (command instanceof BatchWriteCommand) {
    for (const requests of Object.values(command.input.RequestItems ?? {}))
      for (const request of requests) note(request.PutRequest?.Item ?? request.DeleteRequest?.Key);
  }
}

/** A conditional write lost: the item is not in the state the write expected. */
export class ConditionFailedError extends Error {
  override readonly name = 'ConditionFailedError';
}

export interface TableOptions {
  tableName: string;
  /** An SDK client to use (Powertools' `awsSdkV3Client` habit); a default one is built when absent. */
  client?: DynamoDBClient;
  clientConfig?: DynamoDBClientConfig;
}

export class TableClient {
  readonly doc: DynamoDBDocumentClient;
  readonly client: DynamoDBClient;
  readonly tableName: string;

  constructor(options: TableOptions) {
    this.client = options.client ?? new DynamoDBClient(options.clientConfig ?? {});
    this.doc = DynamoDBDocumentClient.from(this.client, {
      marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
    });
    const send = this.doc.send.bind(this.doc) as (...args: unknown[]) => Promise<unknown>;
    (this.doc as { send: unknown }).send = (...args: unknown[]) => {
      noteWrite(args[0]);
      return send(...args);
    };
    this.tableName = options.tableName;
  }

  /** Sends a conditional write: true when it landed, false when its condition did not hold. */
  async conditional(command: PutCommand | UpdateCommand | DeleteCommand): Promise<boolean> {
    try {
      // One call for the three command types (send is overloaded per command).
      await this.doc.send(command as PutCommand);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * Many items at once (BatchGetItem, 100 keys a request, the requests side by side), by `itemKeyText`;
   * a key with no item is absent from the map. Keys DynamoDB leaves unprocessed (throughput, or the 16 MB
   * answer limit) are asked again, after a pause that doubles each time, as AWS recommends.
   */
  async getMany(keys: readonly ItemKey[], consistent: boolean): Promise<Map<string, Item>> {
    const unique = new Map(keys.map((key) => [itemKeyText(key), { pk: key.pk, sk: key.sk }]));
    const found = new Map<string, Item>();
    const all = [...unique.values()];
    const chunks = Array.from({ length: Math.ceil(all.length / BATCH_GET_KEYS) }, (_, i) =>
      all.slice(i * BATCH_GET_KEYS, (i + 1) * BATCH_GET_KEYS),
    );
    await Promise.all(
      chunks.map(async (chunk) => {
        let pending: ItemKey[] = chunk;
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt > 0) await sleep(Math.min(25 * 2 ** attempt, 1000));
          const result = await this.doc.send(
            new BatchGetCommand({
              RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: consistent } },
            }),
          );
          for (const item of result.Responses?.[this.tableName] ?? [])
            found.set(itemKeyText(item as ItemKey), item);
          pending = (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as ItemKey[];
          if (attempt >= BATCH_GET_ATTEMPTS && pending.length > 0)
            throw new Error(`BatchGetItem left ${pending.length} keys unprocessed ${attempt + 1} times`);
        }
      }),
    );
    return found;
  }

  /** Every item a Query matches, page after page. */
  async *pages(input: QueryCommandInput): AsyncGenerator<Item> {
    let start: Item | undefined;
    do {
      const result = await this.doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      yield* result.Items ?? [];
      start = result.LastEvaluatedKey;
    } while (start);
  }
}

export function conditionFailed(error: unknown): unknown {
  return error instanceof ConditionalCheckFailedException ? new ConditionFailedError(error.message) : error;
}
