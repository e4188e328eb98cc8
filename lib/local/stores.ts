/**
 * Which DynamoDB the local server and the tests talk to: the one module that knows (`ALLOT_STORE`).
 *
 * - `dynalite` (the default; Node only): dynalite in this process (lib/local/store/dynalite.ts), its committed
 *   changes captured and fed to the stream function by the local emulation (lib/local/stream/emulation.ts);
 * - `dynamodb-local`: AWS's DynamoDB Local, started as a child process (lib/local/store/dynamodb-local.ts; needs
 *   Java 17+), stopped with this one; the stream function is fed from the real DynamoDB Streams API by a
 *   consumer that plays Lambda's event source mapping (lib/local/stream/consumer.ts), with a checkpoint
 *   per shard in the data folder. `ALLOT_DYNAMODB_LOCAL_ENDPOINT` names one already running instead
 *   (the tests start one per run);
 * - `endpoint`: an existing table (`ALLOT_DYNAMODB_ENDPOINT`, or AWS's own endpoint when unset;
 *   `AWS_REGION`; `ALLOT_TABLE_NAME`), such as a deployed stack's, with the credentials of the default
 *   chain. The server then serves HTTP and consumes no stream: the deployed stream function does.
 *
 * Everything else gets an `AllotStore` and never asks which one it is.
 */
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { startDynamoDBLocal } from './store/dynamodb-local.ts';
import {
  ensureTable,
  localClient,
  startLocalStore,
  type ChangeListener,
  type ItemChange,
} from './store/dynalite.ts';
import { startDynaliteStream, startSecondReader } from './stream/durable.ts';
import type { FilterPattern } from '../cloud/stream-filter.ts';
import { HISTORY_MAPPING } from '../cloud/stream-mapping.ts';
import { StreamConsumer, type StreamConsumerOptions, type StreamHandler } from './stream/consumer.ts';

export const STORE_KINDS = ['dynalite', 'dynamodb-local', 'endpoint'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** What feeds the stream function: the emulation or the Streams API consumer. */
export interface StreamFeed {
  /** Resolves when every record so far, and every record their handling wrote, has been delivered. */
  drained(): Promise<void>;
  /** Stops delivering; resolves once the batch in flight has finished. */
  stop(): Promise<void>;
  /** Records that exhausted their retries (the deployed stack's on-failure queue). */
  readonly failed: readonly DynamoDBRecord[];
}

/** Every committed change of one table, for tests that deliver the stream by hand. */
export interface ChangeFeed {
  onChange(listener: ChangeListener): () => void;
  /** Resolves once every change committed before the call has reached the listeners. */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

export interface StreamOptions {
  handler: StreamHandler;
  onFailure?: (record: DynamoDBRecord, error?: unknown) => void;
  /**
   * A second reader of the stream beside the stream function (the history function, as deployed): its
   * own filter patterns, a batch that throws retried whole until it succeeds, never bisected; with
   * dynalite it keeps no journal (service/history/changes.ts says what a restart does instead).
   */
  reader?: { name: string; filters: readonly FilterPattern[] };
}

export interface AllotStore {
  readonly kind: StoreKind;
  readonly endpoint: string;
  /** What it is, for a log line. */
  readonly label: string;
  /** The table the server uses by default (`ALLOT_TABLE_NAME` for `endpoint`). */
  readonly defaultTableName: string;
  /** A new SDK client for this store; the caller destroys it. */
  client(): DynamoDBClient;
  /** Creates the table as the CDK construct deploys it, unless it exists (`endpoint`: checks it exists). */
  prepareTable(tableName: string): Promise<void>;
  /** Starts feeding the table's stream records to the function; none for `endpoint`. */
  startStream(tableName: string, options: StreamOptions): Promise<StreamFeed | undefined>;
  changes(tableName: string): Promise<ChangeFeed>;
  close(): Promise<void>;
  /**
   * Gives up at once, synchronously, what would outlive this process a moment (DynamoDB Local's JVM is
   * killed); what was not written stays as a crash leaves it. For a stop out of time.
   */
  abort(): void;
}

export interface StoreOptions {
  /** Default: `ALLOT_STORE`, else `dynalite`. */
  kind?: StoreKind;
  /** A folder for the data (and the stream checkpoints), or `:memory:`. */
  dataDir: string;
  env?: NodeJS.ProcessEnv;
}

export function storeKindOf(env: NodeJS.ProcessEnv = process.env): StoreKind {
  const kind = env.ALLOT_STORE ?? 'dynalite';
  if (!(STORE_KINDS as readonly string[]).includes(kind)) {
    throw new Error(`ALLOT_STORE=${kind} is not one of ${STORE_KINDS.join(', ')}`);
  }
  return kind as StoreKind;
}

export async function openStore(options: StoreOptions): Promise<AllotStore> {
  const env = options.env ?? process.env;
  const kind = options.kind ?? storeKindOf(env);
  if (kind === 'dynalite') return openDynalite(options.dataDir);
  if (kind === 'dynamodb-local') return openDynamoDBLocal(options.dataDir, env);
  return openEndpoint(env);
}

async function openDynalite(dataDir: string): Promise<AllotStore> {
  const store = await startLocalStore({ dataDir });
  const detachers: (() => Promise<void>)[] = [];
  const changesOf = (tableName: string): ChangeFeed => ({
    onChange: (listener) =>
      store.onChange((change) => {
        if (change.tableName === tableName) listener(change);
      }),
    // dynalite reports each change as it commits: nothing is ever behind.
    caughtUp: async () => undefined,
    close: async () => undefined,
  });
  return {
    kind: 'dynalite',
    endpoint: store.endpoint,
    label: 'dynalite in this process; stream: local emulation',
    defaultTableName: 'allot',
    client: () => localClient(store.endpoint),
    prepareTable: (tableName) =>
      withClient(localClient(store.endpoint), (client) => ensureTable(client, tableName)),
    // Journaled in the data folder (lib/local/stream/durable.ts), so a crash loses no record.
    async startStream(tableName, streamOptions) {
      if (streamOptions.reader) {
        const { feed, detach } = startSecondReader(store, tableName, {
          ...streamOptions,
          reader: streamOptions.reader,
        });
        detachers.push(detach);
        return feed;
      }
      const { feed, detach } = await startDynaliteStream(store, dataDir, tableName, streamOptions);
      detachers.push(detach);
      return feed;
    },
    changes: async (tableName) => changesOf(tableName),
    async close() {
      for (const detach of detachers.splice(0)) await detach();
      await store.close();
    },
    // In this process: nothing outlives it (LevelDB's lock goes with it).
    abort: () => undefined,
  };
}

async function openDynamoDBLocal(dataDir: string, env: NodeJS.ProcessEnv): Promise<AllotStore> {
  // Empty is unset, as a shell's `VAR=` means.
  const given = env.ALLOT_DYNAMODB_LOCAL_ENDPOINT || undefined;
  // A folder of its own: dynalite's files may be in the data folder too.
  const folder = dataDir === ':memory:' ? undefined : join(dataDir, 'dynamodb-local');
  const started = given ? undefined : await startDynamoDBLocal({ dataDir: folder ?? ':memory:' });
  const endpoint = given ?? started!.endpoint;
  const streams = new DynamoDBStreamsClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 3,
  });
  const consumers = new Set<StreamConsumer>();
  const streamArnOf = (tableName: string) =>
    withClient(localClient(endpoint), async (client) => {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      if (!Table?.LatestStreamArn) throw new Error(`table ${tableName} has no stream`);
      return Table.LatestStreamArn;
    });
  const consume = (options: StreamConsumerOptions) => {
    const consumer = new StreamConsumer(options).start();
    consumers.add(consumer);
    return consumer;
  };
  return {
    kind: 'dynamodb-local',
    endpoint,
    label: `DynamoDB Local (${given ? 'at ' + given : 'a child process'}); stream: the Streams API`,
    defaultTableName: 'allot',
    client: () => localClient(endpoint),
    prepareTable: (tableName) =>
      withClient(localClient(endpoint), (client) => ensureTable(client, tableName, { stream: true })),
    async startStream(tableName, { reader, ...streamOptions }) {
      const suffix = reader ? `-${reader.name}` : '';
      return consume({
        client: streams,
        streamArn: await streamArnOf(tableName),
        ...streamOptions,
        ...(reader && {
          filters: reader.filters,
          maxRetries: Infinity,
          bisect: false,
          parallelizationFactor: HISTORY_MAPPING.parallelizationFactor,
        }),
        checkpointFile: folder && join(folder, `stream-checkpoints-${tableName}${suffix}.json`),
        onFailureFile: folder && join(folder, `stream-on-failure-${tableName}${suffix}.jsonl`),
      });
    },
    async changes(tableName) {
      const listeners = new Set<ChangeListener>();
      const consumer = consume({
        client: streams,
        streamArn: await streamArnOf(tableName),
        filters: 'none',
        async handler(event) {
          for (const record of event.Records) {
            const change = changeOf(tableName, record);
            for (const listener of listeners) listener(change);
          }
        },
      });
      return {
        onChange(listener) {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
        caughtUp: () => consumer.drained(),
        async close() {
          consumers.delete(consumer);
          await consumer.stop();
        },
      };
    },
    async close() {
      const stopped = Promise.all([...consumers].map((consumer) => consumer.stop()));
      // Our own JVM goes first: what a consumer's batch is waiting on then fails at once (a stopped
      // consumer leaves that batch for the next start) rather than running on to its end.
      await started?.close();
      await stopped;
      streams.destroy();
    },
    abort: () => started?.kill(),
  };
}

/** A stream record back to the change it reports (images as the table holds them). */
function changeOf(tableName: string, record: DynamoDBRecord): ItemChange {
  return {
    tableName,
    ...(record.dynamodb?.OldImage && { oldImage: record.dynamodb.OldImage as ItemChange['oldImage'] }),
    ...(record.dynamodb?.NewImage && { newImage: record.dynamodb.NewImage as ItemChange['newImage'] }),
  };
}

async function openEndpoint(env: NodeJS.ProcessEnv): Promise<AllotStore> {
  const tableName = env.ALLOT_TABLE_NAME;
  const region = env.AWS_REGION;
  if (!tableName || !region) {
    throw new Error(
      'ALLOT_STORE=endpoint needs ALLOT_TABLE_NAME and AWS_REGION (and ALLOT_DYNAMODB_ENDPOINT, unless AWS)',
    );
  }
  const endpoint = env.ALLOT_DYNAMODB_ENDPOINT;
  const client = () => new DynamoDBClient({ region, ...(endpoint && { endpoint }) });
  return {
    kind: 'endpoint',
    endpoint: endpoint ?? `https://dynamodb.${region}.amazonaws.com`,
    label: `table ${tableName} at ${endpoint ?? `DynamoDB in ${region}`}; stream: none here (the deployed stream function's)`,
    defaultTableName: tableName,
    client,
    prepareTable: (name) =>
      withClient(client(), async (dynamodb) => {
        // An existing table only: its schema, stream and stream function are the deployment's.
        try {
          await dynamodb.send(new DescribeTableCommand({ TableName: name }));
        } catch (error) {
          if (!(error instanceof ResourceNotFoundException)) throw error;
          throw new Error(`ALLOT_STORE=endpoint: no table ${name} at ${endpoint ?? `DynamoDB in ${region}`}`);
        }
      }),
    startStream: async () => undefined,
    changes: async () => {
      throw new Error('ALLOT_STORE=endpoint consumes no stream: the deployed stream function does');
    },
    close: async () => undefined,
    abort: () => undefined,
  };
}

async function withClient<T>(
  client: DynamoDBClient,
  use: (client: DynamoDBClient) => Promise<T>,
): Promise<T> {
  try {
    return await use(client);
  } finally {
    client.destroy();
  }
}
