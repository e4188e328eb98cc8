import { unmarshall } from '@aws-sdk/util-dynamodb';
/**
 * The world the model test runs in: one table in a shared in-memory dynalite, several independent "Lambda
 * instances" of the HTTP handler (each its own SDK client with its own faults, its own search memory), a
 * stream function instance (its own client and faults) fed by a hand-delivered stream, and an observer that
 * reads the whole table to check the invariants. Not a test file.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createHttpHandler } from '../../functions/http.ts';
import { createStreamHandler } from '../../functions/stream.ts';
import { HANDLER_DEADLINE_MS } from '../../lib/service/allocation/decide.ts';
import { fakeContext } from '../../lib/local/server.ts';
import type { AllotStore, ChangeFeed } from '../../lib/local/stores.ts';
import { Table } from '../../lib/store/table.ts';
import { sweepNamespace, type RepairReport } from '../../lib/service/repair/sweep.ts';
import { expireLeases } from '../../lib/service/leases/leases.ts';
import { LocalTtl } from '../../lib/local/store/ttl.ts';
import { httpEvent } from '../helpers/events.ts';
import { Faults, faultyClient, seededRandom, type FaultKind } from '../helpers/faults.ts';
import { StreamQueue } from '../helpers/stream-queue.ts';

export const NAMESPACE = 'model';

export interface Answer {
  status: number;
  body: any;
}

export interface Instance {
  faults: Faults;
  call(method: string, path: string, body?: unknown): Promise<Answer>;
  /** A new Lambda instance in place of this one (after it died): fresh search memory, same client. */
  restart(): void;
}

/**
 * Time as the handlers see it. A handler that dies leaves its claim `Allocating` until its deadline; the
 * test moves the clock past that deadline instead of waiting for it.
 */
export class Clock {
  offset = 0;
  private readonly realNow = Date.now.bind(Date);
  now = () => this.realNow() + this.offset;
  passHandlerDeadline(): void {
    this.offset += HANDLER_DEADLINE_MS + 1;
  }
}

let tables = 0;

export class World {
  readonly instances: Instance[] = [];
  readonly streamFaults: Faults;
  readonly streamHandler: ReturnType<typeof createStreamHandler>;
  private readonly streamTable: Table;
  /** Repair sweeps run, and the fixes they made. */
  sweeps = 0;
  repairs = 0;
  /**
   * Sweeps that died part way. Each fix is idempotent, and what a dead sweep left half done (a summary
   * bit it set ahead of the stream's own record, with the recount still to come) is the next sweep's,
   * as a lost record is: drains then sweep until one finds nothing.
   */
  sweepsDied = 0;
  readonly queue: StreamQueue;
  readonly random: () => number;
  /** DynamoDB's TTL, emulated (lib/local/store/ttl.ts): no faults, it is no caller of ours. */
  readonly ttl: LocalTtl;
  private readonly observer: Table;
  private readonly observerHandler: ReturnType<typeof createHttpHandler>;
  private readonly clients: { destroy(): void }[] = [];

  private constructor(
    readonly store: AllotStore,
    readonly tableName: string,
    seed: number,
    instanceCount: number,
    changes: ChangeFeed,
  ) {
    this.random = seededRandom(seed);
    const observerClient = store.client();
    this.clients.push(observerClient);
    this.observer = new Table({ tableName, client: observerClient });
    this.ttl = new LocalTtl({ client: observerClient, tableName, intervalMs: 0 });
    this.observerHandler = createHttpHandler({ table: this.observer });
    for (let i = 0; i < instanceCount; i++) this.instances.push(this.startInstance(seed + 1 + i));
    this.streamFaults = new Faults(seededRandom(seed + 100));
    const streamClient = faultyClient(store.endpoint, this.streamFaults);
    this.clients.push(streamClient);
    this.streamTable = new Table({ tableName, client: streamClient });
    this.streamHandler = createStreamHandler({ table: this.streamTable });
    this.queue = new StreamQueue(changes);
    if (process.env.MODEL_TRACE) traceChanges(changes, new RegExp(process.env.MODEL_TRACE));
  }

  static async create(store: AllotStore, seed: number, instanceCount = 3): Promise<World> {
    const tableName = `model-${process.pid}-${++tables}`;
    await store.prepareTable(tableName);
    return new World(store, tableName, seed, instanceCount, await store.changes(tableName));
  }

  private startInstance(seed: number): Instance {
    const faults = new Faults(seededRandom(seed));
    const client = faultyClient(this.store.endpoint, faults);
    this.clients.push(client);
    const table = new Table({ tableName: this.tableName, client });
    let handler = createHttpHandler({ table, frontiers: new Map() });
    return {
      faults,
      restart: () => {
        handler = createHttpHandler({ table, frontiers: new Map() });
      },
      call: (method, path, body) => callHandler(handler, method, path, body),
    };
  }

  /** Reads through a handler on a client without faults (the pools' status as the API shows it). */
  observe(path: string): Promise<Answer> {
    return callHandler(this.observerHandler, 'GET', path);
  }

  /** Every item of the table, by type. */
  async snapshot(): Promise<Snapshot> {
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.observer.doc.send(
        new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: start, ConsistentRead: true }),
      );
      items.push(...((page.Items ?? []) as Item[]));
      start = page.LastEvaluatedKey;
    } while (start);
    return {
      pools: items.filter((item) => item.t === 'pool'),
      claims: items.filter((item) => item.t === 'claim'),
      allocations: items.filter((item) => item.t === 'alloc'),
      holds: items.filter((item) => item.t === 'hold'),
      quarantines: items.filter((item) => item.t === 'quarantine'),
      quotas: items.filter((item) => item.t === 'holders'),
    };
  }

  /** One run of the repair sweep over a namespace, the model's unless named (lib/service/repair/sweep.ts). */
  async repair(namespace = NAMESPACE): Promise<RepairReport> {
    this.sweeps++;
    const report = await sweepNamespace({ table: this.streamTable }, namespace, { recheckMs: 0 }).catch(
      (error: unknown) => {
        if (process.env.MODEL_TRACE) console.log(`[trace] sweep died: ${(error as Error).message}`);
        this.sweepsDied++;
        throw error;
      },
    );
    this.repairs += Object.values(report.fixed).reduce((sum, n) => sum + n, 0);
    if (process.env.MODEL_TRACE)
      console.log(`[trace] sweep: ${JSON.stringify({ found: report.found, fixed: report.fixed })}`);
    return report;
  }

  /**
   * The deployed expiry run (every minute: lib/service/leases/leases.ts), on the stream function's client and
   * faults, as the repair function's; a run that dies just stops (the next finds what it left).
   */
  async expireLeases(): Promise<number> {
    return expireLeases({ table: this.streamTable }).catch(() => 0);
  }

  /** Whether what the stream cannot mend alone happened: records lost for good, or a sweep that died. */
  get needsSweeps(): boolean {
    return this.queue.lost > 0 || this.sweepsDied > 0;
  }

  /** Faults injected so far, by kind, over every instance and the stream function. */
  faultsInjected(): Record<FaultKind, number> {
    const sum: Record<FaultKind, number> = { throttle: 0, timeout: 0, lostAnswer: 0, died: 0 };
    for (const faults of [...this.instances.map((instance) => instance.faults), this.streamFaults])
      for (const kind of Object.keys(sum) as FaultKind[]) sum[kind] += faults.injected[kind];
    return sum;
  }

  setFaultRate(rate: number): void {
    for (const instance of this.instances) instance.faults.rate = rate;
    this.streamFaults.rate = rate;
  }

  async close(): Promise<void> {
    await this.queue.close();
    for (const client of this.clients) client.destroy();
  }
}

export type Item = Record<string, any> & { pk: string; sk: string; t: string };

export interface Snapshot {
  pools: Item[];
  claims: Item[];
  allocations: Item[];
  /** Name holds (lib/service/allocation/name-holds.ts): a name of another value, kept at that value's key. */
  holds: Item[];
  /** Freed values held back (lib/service/leases/quarantine.ts), each at its value's key. */
  quarantines: Item[];
  /** A shared pool's holders, one item per pool and claim namespace (lib/store/quotas.ts). */
  quotas?: Item[];
}

async function callHandler(
  handler: ReturnType<typeof createHttpHandler>,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const result = (await handler(
    httpEvent(method, path.startsWith('/') ? path : `/v1/namespaces/${NAMESPACE}/${path}`, body),
    fakeContext('allot-model'),
  )) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode ?? 0, body: JSON.parse(result.body ?? 'null') };
}

/**
 * `MODEL_TRACE=<regex>`: prints every committed change whose JSON matches, in commit order, with the
 * fields a violation usually turns on (to read a failing seed's story: replay it with MODEL_SEED,
 * MODEL_PATH, MODEL_REPLAY_PATH and MODEL_NO_SHRINK=1).
 */
function traceChanges(changes: ChangeFeed, pattern: RegExp): void {
  const brief = (image: Record<string, any> | undefined) =>
    image &&
    JSON.stringify({
      t: image.t,
      phase: image.phase,
      uid: image.metadata?.uid,
      bound: image.bound?.sk,
      claimRef: image.spec?.claimRef,
      value: image.value ?? image.status?.value,
      rv: image.rv,
    });
  changes.onChange((change) => {
    if (!pattern.test(JSON.stringify(change))) return;
    const before = change.oldImage && unmarshall(change.oldImage);
    const after = change.newImage && unmarshall(change.newImage);
    const key = (after ?? before)!;
    console.log(`[trace] ${key.pk} ${key.sk} ${brief(before)} -> ${brief(after)}`);
  });
}
