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
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { ItemKey } from '../domain/objects/records.ts';
import type { Item } from './items.ts';

/** An item key as one string, for maps of items by key. */
export function itemKeyText(key: ItemKey): string {
  return `${key.pk}\u0000${key.sk}`;
}

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

/**
 * A conditional write lost: the item is not in the state the write expected. `item` is the item it
 * failed on, when the write asked for it (ReturnValuesOnConditionCheckFailure) and the store sent it.
 */
export class ConditionFailedError extends Error {
  override readonly name = 'ConditionFailedError';
  constructor(
    message: string,
    readonly item?: Item,
  ) {
    super(message);
  }
}

/**
 * A write whose outcome is unknown (its answer was lost: a timeout, a 5xx), and whose sending again was
 * refused (`sentOnce`). It may have landed.
 */
export class UncertainWriteError extends Error {
  override readonly name = 'UncertainWriteError';
}

/**
 * A command the SDK sends again only after an answer that says nothing was written (throttling, or a 4xx
 * it retries to correct its clock): a retry after a timeout, a lost answer or a 5xx fails with
 * UncertainWriteError instead. For a create whose second sending could land after the first was deleted,
 * and bring back what was deleted under the same uid (table.ts createObject).
 */
export function sentOnce<C extends { middlewareStack: { add: (...args: any[]) => void } }>(command: C): C {
  /** Attempts whose answer said nothing was written: only after one of those may the next go out. */
  const refused = new Set<number>();
  // In the deserialize step, inside the retry middleware (finalizeRequest), which numbers each attempt in
  // the amz-sdk-request header. Unnamed: a document client command's stack is merged twice.
  command.middlewareStack.add(
    (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
      const header = (args as { request?: { headers?: Record<string, string> } }).request?.headers?.[
        'amz-sdk-request'
      ];
      const attempt = Number(/attempt=(\d+)/.exec(header ?? '')?.[1] ?? 1);
      if (attempt > 1 && !refused.has(attempt - 1))
        throw new UncertainWriteError('a write was not sent again: its first outcome is unknown');
      try {
        return await next(args);
      } catch (error) {
        if (refusedUnwritten(error)) refused.add(attempt);
        throw error;
      }
    },
    { step: 'deserialize', priority: 'high' },
  );
  return command;
}

/** An answer that says the write was not applied: a 4xx from the store, or throttling. */
function refusedUnwritten(error: unknown): boolean {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  const status = $metadata?.httpStatusCode;
  if (status !== undefined && status >= 400 && status < 500) return true;
  return /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded/.test(name ?? '');
}

/** BatchGetItem takes at most this many keys a request. */
const BATCH_GET_MAX = 100;
const BATCH_GET_ATTEMPTS = 6;

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
    return (await this.sendConditional(command)) !== undefined;
  }

  /**
   * Sends a conditional write that asks for the item back (`ReturnValues`): what it returned, or undefined
   * when its condition did not hold.
   */
  async conditionalReturning<T>(command: PutCommand | UpdateCommand | DeleteCommand): Promise<T | undefined> {
    return (await this.sendConditional(command))?.Attributes as T | undefined;
  }

  /** The write's answer; undefined when its condition did not hold. */
  private async sendConditional(
    command: PutCommand | UpdateCommand | DeleteCommand,
  ): Promise<{ Attributes?: Item } | undefined> {
    try {
      // One call for the three command types (send is overloaded per command).
      return await this.doc.send(command as PutCommand);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /**
   * Several items in one BatchGetItem (requests in flight together cost one round trip; each item is
   * billed as its own GetItem would be), in the order of `keys`; undefined where none. Keys the store
   * left unprocessed (throttled) are asked for again after a back-off, as AWS advises for BatchGetItem.
   */
  async getMany(keys: readonly ItemKey[], consistent: boolean): Promise<(Item | undefined)[]> {
    if (keys.length > BATCH_GET_MAX) throw new Error(`at most ${BATCH_GET_MAX} keys a BatchGetItem`);
    const found = new Map<string, Item>();
    const id = (key: { pk?: unknown; sk?: unknown }) => `${String(key.pk)}\u0000${String(key.sk)}`;
    let pending: ItemKey[] = [...keys];
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= BATCH_GET_ATTEMPTS)
        throw new Error(`BatchGetItem left keys unprocessed ${attempt} times`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      const result = await this.doc.send(
        new BatchGetCommand({
          RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: consistent } },
        }),
      );
      for (const item of result.Responses?.[this.tableName] ?? []) found.set(id(item), item);
      pending = (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as ItemKey[];
    }
    return keys.map((key) => found.get(id(key)));
  }

  /**
   * Any number of items, by `itemKeyText` (a key with no item is absent from the map): getMany's
   * requests of 100 keys, side by side (one round trip). The stream function's batch read.
   */
  async getByKey(keys: readonly ItemKey[], consistent: boolean): Promise<Map<string, Item>> {
    const all = [...new Map(keys.map((key) => [itemKeyText(key), { pk: key.pk, sk: key.sk }])).values()];
    const chunks = Array.from({ length: Math.ceil(all.length / BATCH_GET_MAX) }, (_, i) =>
      all.slice(i * BATCH_GET_MAX, (i + 1) * BATCH_GET_MAX),
    );
    const answers = await Promise.all(chunks.map((chunk) => this.getMany(chunk, consistent)));
    const found = new Map<string, Item>();
    answers.forEach((items, i) =>
      items.forEach((item, j) => {
        if (item) found.set(itemKeyText(chunks[i]![j]!), item);
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
  if (!(error instanceof ConditionalCheckFailedException)) return error;
  return new ConditionFailedError(error.message, error.Item ? (unmarshall(error.Item) as Item) : undefined);
}
