/**
 * The embedded DynamoDB for `npm start` and the tests: dynalite in this process, on 127.0.0.1, with every
 * committed item change captured for the stream emulation (dynalite has no Streams).
 *
 * The capture wraps dynalite's item store: its put and delete run under dynalite's per-key lock, so the
 * old image read just before a write and the new image written are exactly what DynamoDB Streams would
 * report, in commit order per key.
 */
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { TABLE_INDEXES, TABLE_PARTITION_KEY, TABLE_SORT_KEY } from '../../store/schema.ts';

const require = createRequire(import.meta.url);

export type Image = Record<string, AttributeValue>;

/** One committed change to one item. */
export interface ItemChange {
  tableName: string;
  oldImage?: Image;
  newImage?: Image;
}

export type ChangeListener = (change: ItemChange) => void;

/**
 * Called with a change before dynalite writes it (under dynalite's per-key lock, before its index
 * updates): the write waits for the promise, and fails, unacknowledged, when it rejects.
 */
export type WriteAhead = (change: ItemChange) => Promise<void>;

interface LevelLike {
  get(key: string, callback: (error: Error | null | undefined, value?: Image) => void): void;
  put(key: string, value: Image, callback: (error?: Error | null) => void): void;
  del(key: string, callback: (error?: Error | null) => void): void;
  allotHooked?: boolean;
}

interface DynaliteStore {
  getItemDb(name: string): LevelLike;
  allotWriteAhead?: { current?: WriteAhead };
  /** dynalite's own (db/lifecycle.js): its graceful close waits for the operations it tracks. */
  lifecycleManager?: { trackOperation(operation: Promise<unknown>): Promise<unknown> };
}

type DynaliteOptions = Record<string, unknown> & {
  allotListeners?: Set<ChangeListener>;
  allotWriteAhead?: { current?: WriteAhead };
  /** The store dynalite made, handed back by the patched factory. */
  allotStore?: DynaliteStore;
};

type UpdateIndexes = (
  store: DynaliteStore,
  table: { TableName: string },
  existingItem: Image | undefined,
  item: Image | null | undefined,
  callback: (error?: Error | null) => void,
) => void;

type CheckConditional = (
  data: { ReturnValuesOnConditionCheckFailure?: string },
  existingItem: Image | undefined,
) => (Error & { body?: Record<string, unknown> }) | null | undefined;

let patched = false;

/** Wraps dynalite's store factory once, so each store reports its item changes to its own listeners. */
function patchDynalite(): void {
  if (patched) return;
  patched = true;
  const db = require('dynalite/db') as {
    create: (options: DynaliteOptions) => DynaliteStore;
    updateIndexes: UpdateIndexes;
    checkConditional: CheckConditional;
  };
  const create = db.create;
  // A write whose condition fails answers the item it failed on when asked to (the request's
  // ReturnValuesOnConditionCheckFailure: ALL_OLD), as DynamoDB and DynamoDB Local do and dynalite does not
  // (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html): a claim's create
  // that finds its name taken learns what holds it without a read (service/operations/claims.ts).
  for (const action of ['putItem', 'updateItem', 'deleteItem']) {
    const { types } = require(`dynalite/validations/${action}`) as { types: Record<string, unknown> };
    types.ReturnValuesOnConditionCheckFailure = { type: 'String', enum: ['ALL_OLD', 'NONE'] };
  }
  const checkConditional = db.checkConditional;
  db.checkConditional = (data, existingItem) => {
    const failure = checkConditional(data, existingItem);
    if (failure?.body && existingItem && data.ReturnValuesOnConditionCheckFailure === 'ALL_OLD')
      failure.body.Item = existingItem;
    return failure;
  };
  // Every write action (put, update, delete, batch) calls updateIndexes with the old and new item under
  // the key's lock, just before it writes the item: the one place a write can be held back.
  const updateIndexes = db.updateIndexes;
  db.updateIndexes = (store, table, existingItem, item, callback) => {
    const writeAhead = store.allotWriteAhead?.current;
    const change: ItemChange = {
      tableName: table.TableName,
      oldImage: existingItem ?? undefined,
      newImage: item ?? undefined,
    };
    if (!writeAhead || JSON.stringify(change.oldImage) === JSON.stringify(change.newImage))
      return updateIndexes(store, table, existingItem, item, callback);
    writeAhead(change).then(
      () => updateIndexes(store, table, existingItem, item, callback),
      // An error with a status is answered (a 500 the SDK retries); any other, dynalite throws.
      (error: unknown) =>
        callback(
          Object.assign(new Error(String(error)), {
            statusCode: 500,
            body: {
              __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
              message: `the change could not be kept for the stream: ${String(error)}`,
            },
          }),
        ),
    );
  };
  db.create = (options: DynaliteOptions) => {
    const store = create(options);
    options.allotStore = store;
    store.allotWriteAhead = options.allotWriteAhead;
    const listeners = options.allotListeners;
    if (!listeners) return store;
    const getItemDb = store.getItemDb;
    store.getItemDb = (name: string) => {
      const itemDb = getItemDb(name);
      if (!itemDb.allotHooked) hookItemDb(itemDb, name, listeners);
      return itemDb;
    };
    return store;
  };
}

function hookItemDb(itemDb: LevelLike, tableName: string, listeners: Set<ChangeListener>): void {
  itemDb.allotHooked = true;
  const put = itemDb.put.bind(itemDb);
  const del = itemDb.del.bind(itemDb);
  const readOld = (key: string, then: (old: Image | undefined) => void) =>
    itemDb.get(key, (error, value) => then(error ? undefined : (value ?? undefined)));
  const emit = (change: ItemChange) => {
    // DynamoDB writes no stream record for a write that changes nothing.
    if (JSON.stringify(change.oldImage) === JSON.stringify(change.newImage)) return;
    for (const listener of listeners) listener(change);
  };
  itemDb.put = (key, value, callback) =>
    readOld(key, (oldImage) =>
      put(key, value, (error) => {
        if (!error) emit({ tableName, oldImage, newImage: value });
        callback(error);
      }),
    );
  itemDb.del = (key, callback) =>
    readOld(key, (oldImage) =>
      del(key, (error) => {
        if (!error && oldImage) emit({ tableName, oldImage });
        callback(error);
      }),
    );
}

export interface LocalStore {
  endpoint: string;
  /** Subscribes to committed item changes; returns the unsubscribe function. */
  onChange(listener: ChangeListener): () => void;
  /** Holds every write until `writeAhead` has kept its change (one at a time; undefined: none). */
  setWriteAhead(writeAhead: WriteAhead | undefined): void;
  close(): Promise<void>;
}

/**
 * Starts dynalite on 127.0.0.1 (a free port unless `port` is given). `dataDir` keeps the data on disk;
 * `':memory:'` keeps none.
 */
export async function startLocalStore(options: { dataDir: string; port?: number }): Promise<LocalStore> {
  patchDynalite();
  const dynalite = require('dynalite') as (options: DynaliteOptions) => Server;
  const listeners = new Set<ChangeListener>();
  const writeAhead: { current?: WriteAhead } = {};
  const dynaliteOptions: DynaliteOptions = {
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    allotListeners: listeners,
    allotWriteAhead: writeAhead,
  };
  if (options.dataDir !== ':memory:') {
    mkdirSync(options.dataDir, { recursive: true });
    dynaliteOptions.path = options.dataDir;
  }
  const server = dynalite(dynaliteOptions);
  trackRequests(server, dynaliteOptions.allotStore);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    setWriteAhead(next) {
      writeAhead.current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Connections of clients that went without closing them would hold the close up.
        server.closeAllConnections();
      }),
  };
}

/**
 * Has dynalite's close wait for every request it is working on. An action is several LevelDB calls, and
 * goes on after its client has gone; dynalite's graceful close waits only for the LevelDB call in flight,
 * so one that came between two calls found LevelDB closed and threw from dynalite's request handler
 * (`Error: Database is closed`, at dynalite/index.js: `if (err) throw err`), ending the process mid-stop.
 * A request counts from its arrival until dynalite answers it (or until it is dropped before its body
 * was read: dynalite starts an action only once it has the whole body).
 */
function trackRequests(server: Server, store: DynaliteStore | undefined): void {
  const lifecycle = store?.lifecycleManager;
  if (!lifecycle) return;
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const answered = new Promise<void>((resolve) => {
      const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
      response.end = ((...args: unknown[]) => {
        resolve();
        return end(...args);
      }) as ServerResponse['end'];
      response.once('close', () => {
        if (!request.complete) resolve();
      });
    });
    void lifecycle.trackOperation(answered).catch(() => undefined);
  });
}

/** An SDK client for the local store (dynalite checks no credentials, the SDK still wants some). */
export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 3,
  });
}

/**
 * Creates the table with the schema the CDK construct deploys, unless it exists; `stream` adds its stream
 * (NEW_AND_OLD_IMAGES), for a store that has Streams (dynalite has none).
 */
export async function ensureTable(
  client: DynamoDBClient,
  tableName: string,
  options: { stream?: boolean } = {},
): Promise<void> {
  const attributes = new Set([TABLE_PARTITION_KEY, TABLE_SORT_KEY]);
  for (const index of TABLE_INDEXES) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        ...(options.stream && {
          StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
        }),
        AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: TABLE_PARTITION_KEY, KeyType: 'HASH' },
          { AttributeName: TABLE_SORT_KEY, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: TABLE_INDEXES.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: index.projection },
        })),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`table ${tableName} did not become active`);
}
