/**
 * The stream side of the benchmark (issue 23, part of `npm run bench`; alone: `npx tsx bench/stream.ts
 * [life|throughput|sustained]`). Every DynamoDB request is counted by the same SDK middleware as
 * bench/run.ts, on each function's own client: the claim handler's, the release handler's and the stream
 * function's.
 *
 * - Whole life of a claim, per pool kind: 200 claims (PUT) by one client, then the stream's work on
 *   their records, then 200 releases (DELETE), then the stream's work on theirs (the Recycle reclaim and
 *   its own records). The records of each phase reach the stream function as the deployed mapping would
 *   batch them at this rate: one shard, batches of up to 100, over the mapping's parallelization factor
 *   (bench/stream-feed.ts).
 * - The stream's throughput on one shard: 300 claims' records, then their releases' records, handed to
 *   the stream function all at once (full batches), with 5 ms of latency added to every DynamoDB call of
 *   the stream function's client (an SDK middleware; AWS's typical figure), and with none.
 * - A lone claim: one client, claims one after another, then releases, each record its own batch; the
 *   stream function's requests per claim and per release.
 * - Sustained load: 16 clients (each its own instance and client, 5 ms added to every call) claiming and
 *   releasing for 30 s, on the local stream emulation of `npm start` (lib/local/stream/emulation.ts, the stream
 *   function's client with the same 5 ms); then how long until every count is exact, and the stream's
 *   rate against the handlers'. Twice: the stream function on a thread of its own (bench/stream-thread.ts),
 *   and on the clients' thread.
 *
 * Writes bench/stream-results.json.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createStreamHandler } from '../functions/stream.ts';
import { matchesFilter } from '../lib/cloud/stream-filter.ts';
import { localClient } from '../lib/local/store/dynalite.ts';
import { LOCAL_BATCH_WINDOW_MS, LocalStream, streamRecordOf } from '../lib/local/stream/emulation.ts';
import { Table } from '../lib/store/table.ts';
import { claimBody, NAMESPACE, startInstance, type Instance } from './instance.ts';
import { byOperation, injectLatency, Meter, round, totals, type RequestRecord } from './measure.ts';
import { ShardFeed } from './stream-feed.ts';
import { busyMeter } from './stream-busy.ts';
import { startStreamThread, type StreamThread } from './stream-thread.ts';
import { benchTable, startStoreThread } from './store.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const LIFE_CLAIMS = 200;
const THROUGHPUT_CLAIMS = 300;
const LATENCY_MS = 5;
const LOAD_CLIENTS = 16;
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 30);
const resultsFile = fileURLToPath(new URL('stream-results.json', import.meta.url));
/** One part alone (`npx tsx bench/stream.ts life`), printed rather than written. */
const only = ['life', 'lone', 'throughput', 'sustained'].find((part) => part === process.argv[2]);

/** The deployed mapping's concurrent batches per shard (lib/cloud/stream-mapping.ts; 1 before it existed). */
const parallelization = process.env.BENCH_PARALLELIZATION
  ? Number(process.env.BENCH_PARALLELIZATION)
  : await import('../lib/cloud/stream-mapping.ts' as string).then(
      (module: { STREAM_MAPPING: { parallelizationFactor: number } }) =>
        module.STREAM_MAPPING.parallelizationFactor,
      () => 1,
    );

const started = performance.now();
const progress = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}`);

const store = await startStoreThread({ changes: true });
const tableName = await benchTable(store, 'allot-bench-stream');
const admin = startInstance(store.endpoint, tableName, 'api');

/** The stream function with its own counted client (and latency, when asked). */
function streamFunction(latencyMs = 0) {
  const client = injectLatency(localClient(store.endpoint), latencyMs);
  const meter = new Meter().attach(client);
  const handler = createStreamHandler({ table: new Table({ tableName, client }) });
  return { meter, handler, destroy: () => client.destroy() };
}

function instance(name: string, latencyMs = 0): Instance {
  const created = startInstance(store.endpoint, tableName, name);
  injectLatency(created.client, latencyMs);
  return created;
}

interface Share {
  requests: number;
  units: number;
  /** Writes whose condition failed (another writer came first), per claim. */
  conditionalFailures: number;
  operations: Record<string, { requests: number; units: number }>;
}

function share(records: readonly RequestRecord[], claims: number): Share {
  const sum = totals(records);
  const operations = Object.fromEntries(
    Object.entries(byOperation(records)).map(([operation, { requests, units }]) => [
      operation,
      { requests: round(requests / claims, 2), units: round(units / claims, 2) },
    ]),
  );
  return {
    requests: round(sum.requests / claims, 2),
    units: round(sum.units / claims, 2),
    conditionalFailures: round(sum.conditionalFailures / claims, 2),
    operations,
  };
}

interface PoolKindCase {
  kind: string;
  label: string;
  resource: string;
  spec: Record<string, unknown>;
}

const KINDS: PoolKindCase[] = [
  { kind: 'IndexPool', label: 'index', resource: 'indexpools', spec: { ranges: ['0..65535'] } },
  {
    kind: 'IPAddressPool',
    label: 'IP address',
    resource: 'ipaddresspools',
    spec: { prefixes: ['10.0.0.0/16'] },
  },
  {
    kind: 'IPPrefixPool',
    label: 'fixed-length prefix (/24 of a /8)',
    resource: 'ipprefixpools',
    spec: { prefixes: ['10.0.0.0/8'], allocationPrefixLength: 24 },
  },
  {
    kind: 'IPPrefixPool',
    label: 'range-of-lengths prefix (/24 of a /8 of /16../28)',
    resource: 'ipprefixpools',
    spec: { prefixes: ['11.0.0.0/8'], allocationPrefixLengths: { min: 16, max: 28, default: 24 } },
  },
];

async function createPool(name: string, kind: PoolKindCase) {
  const answer = await admin.call('PUT', `${kind.resource}/${name}`, {
    metadata: { name },
    spec: { ...kind.spec, reclaimPolicy: 'Recycle' },
  });
  if (answer.status >= 300) throw new Error(`pool ${name}: ${JSON.stringify(answer.body)}`);
}

async function poolStatus(kind: PoolKindCase, name: string) {
  return (await admin.call('GET', `${kind.resource}/${name}`)).body?.status as
    { allocated: number; free: string; total: string } | undefined;
}

// ------------------------------------------------------------------ whole life

async function wholeLife(kind: PoolKindCase, index: number) {
  const pool = `life-${index}`;
  const feed = new ShardFeed(store, tableName, parallelization);
  const stream = streamFunction();
  const claimer = instance('claim');
  const releaser = instance('release');
  try {
    await createPool(pool, kind);
    await feed.deliver(stream.handler);
    const names = Array.from({ length: LIFE_CLAIMS }, (_, i) => `life-${index}-${i}`);
    const ref = { kind: kind.kind, name: pool };

    let streamMark = stream.meter.mark();
    let mark = claimer.meter.mark();
    let allocated = 0;
    for (const name of names) {
      const answer = await claimer.call('PUT', `claims/${name}`, claimBody(name, ref));
      if (answer.status < 300 && answer.body.status?.value !== undefined) allocated++;
    }
    const claimHandler = share(claimer.meter.since(mark), LIFE_CLAIMS);
    const claimRecords = feed.pending;
    const onClaim = await feed.deliver(stream.handler);
    const streamOnClaim = share(stream.meter.since(streamMark), LIFE_CLAIMS);

    streamMark = stream.meter.mark();
    mark = releaser.meter.mark();
    for (const name of names) await releaser.call('DELETE', `claims/${name}`);
    const releaseHandler = share(releaser.meter.since(mark), LIFE_CLAIMS);
    const onRelease = await feed.deliver(stream.handler);
    const streamOnRelease = share(stream.meter.since(streamMark), LIFE_CLAIMS);

    const status = await poolStatus(kind, pool);
    const total = (a: Share[], field: 'requests' | 'units') =>
      round(
        a.reduce((sum, s) => sum + s[field], 0),
        2,
      );
    const parts = [claimHandler, streamOnClaim, releaseHandler, streamOnRelease];
    const result = {
      pool: kind.label,
      kind: kind.kind,
      claims: LIFE_CLAIMS,
      allocated,
      claimHandler,
      streamOnClaim,
      releaseHandler,
      streamOnRelease,
      total: { requests: total(parts, 'requests'), units: total(parts, 'units') },
      stream: {
        requests: round(streamOnClaim.requests + streamOnRelease.requests, 2),
        units: round(streamOnClaim.units + streamOnRelease.units, 2),
      },
      records: {
        claim: claimRecords,
        release: onRelease.records,
        batches: onClaim.batches + onRelease.batches,
      },
      countsAfter: status,
      countsExact: status?.allocated === 0 && status.free === status.total,
    };
    progress(
      `whole life, ${kind.label}: ${result.total.requests} requests / ${result.total.units} units per claim ` +
        `(claim ${claimHandler.requests}, stream ${streamOnClaim.requests}, release ${releaseHandler.requests}, ` +
        `stream ${streamOnRelease.requests}); counts exact after: ${result.countsExact}`,
    );
    return result;
  } finally {
    feed.close();
    stream.destroy();
    claimer.destroy();
    releaser.destroy();
  }
}

// ------------------------------------------------------------------ throughput on one shard

async function throughput(latencyMs: number, lanes = parallelization) {
  const kind = KINDS[0]!;
  const pool = `tp-${latencyMs}-${lanes}`;
  const feed = new ShardFeed(store, tableName, lanes);
  const stream = streamFunction(latencyMs);
  const claimer = instance('claim');
  const releaser = instance('release');
  try {
    await createPool(pool, kind);
    await feed.deliver(stream.handler);
    const names = Array.from({ length: THROUGHPUT_CLAIMS }, (_, i) => `tp-${latencyMs}-${lanes}-${i}`);
    for (const name of names)
      await claimer.call('PUT', `claims/${name}`, claimBody(name, { kind: kind.kind, name: pool }));
    const mark = stream.meter.mark();
    const claims = await feed.deliver(stream.handler);
    for (const name of names) await releaser.call('DELETE', `claims/${name}`);
    const releases = await feed.deliver(stream.handler);
    const records = claims.records + releases.records;
    const seconds = (claims.ms + releases.ms) / 1000;
    const status = await poolStatus(kind, pool);
    const result = {
      latencyMs,
      parallelization: lanes,
      lives: THROUGHPUT_CLAIMS,
      records,
      batches: claims.batches + releases.batches,
      seconds: round(seconds, 2),
      recordsPerSecond: round(records / seconds, 1),
      livesPerSecond: round(THROUGHPUT_CLAIMS / seconds, 1),
      requestsPerLife: round(totals(stream.meter.since(mark)).requests / THROUGHPUT_CLAIMS, 2),
      failedRecords: claims.failed + releases.failed,
      countsExact: status?.allocated === 0 && status.free === status.total,
    };
    progress(
      `throughput, one shard, ${lanes} batch(es) at once, ${latencyMs} ms a call: ${result.recordsPerSecond} records/s, ` +
        `${result.livesPerSecond} claim lives/s (${records} records in ${result.seconds} s)`,
    );
    return result;
  } finally {
    feed.close();
    stream.destroy();
    claimer.destroy();
    releaser.destroy();
  }
}

// ------------------------------------------------------------------ a lone claim, each record its own batch

/**
 * A team that claims rarely: one client, claims one after another, then releases, on the local stream
 * emulation. By default with batches of one record, so no record shares a batch with another (issue 34's
 * row); `gathered`: batched as `npm start` batches them (up to 100, gathered for LOCAL_BATCH_WINDOW_MS;
 * the deployed mapping gathers for up to a second, so at least as much). The stream function's requests
 * per claim and per release.
 */
async function lone(gathered = false) {
  const kind = KINDS[0]!;
  const pool = gathered ? 'gathered' : 'lone';
  const stream = streamFunction();
  const local = new LocalStream(
    gathered ? { handler: stream.handler } : { handler: stream.handler, batchSize: 1, batchWindowMs: 0 },
  );
  const unsubscribe = store.onChange((change) => {
    if (change.tableName === tableName) local.push(change);
  });
  const client = instance('lone');
  try {
    await createPool(pool, kind);
    await store.caughtUp();
    await local.drained();
    const names = Array.from({ length: LIFE_CLAIMS }, (_, i) => `${pool}-${i}`);
    const ref = { kind: kind.kind, name: pool };
    const phase = async (call: (name: string) => Promise<unknown>) => {
      const mark = stream.meter.mark();
      const delivered = local.delivered;
      for (const name of names) {
        await call(name);
        // As a rare claimer: the stream is done with this one before the next comes.
        await store.caughtUp();
        await local.drained();
      }
      return { share: share(stream.meter.since(mark), LIFE_CLAIMS), batches: local.delivered - delivered };
    };
    const claims = await phase((name) => client.call('PUT', `claims/${name}`, claimBody(name, ref)));
    const releases = await phase((name) => client.call('DELETE', `claims/${name}`));
    const status = await poolStatus(kind, pool);
    const result = {
      ...(gathered && { windowMs: LOCAL_BATCH_WINDOW_MS }),
      claims: LIFE_CLAIMS,
      perClaim: claims.share,
      perRelease: releases.share,
      batchesPerClaim: round(claims.batches / LIFE_CLAIMS, 2),
      batchesPerRelease: round(releases.batches / LIFE_CLAIMS, 2),
      countsExact: status?.allocated === 0 && status.free === status.total,
    };
    progress(
      `lone claims, ${gathered ? `batches gathered for ${LOCAL_BATCH_WINDOW_MS} ms` : 'each record its own batch'}: stream ${result.perClaim.requests} requests per claim, ` +
        `${result.perRelease.requests} per release (${result.batchesPerClaim} and ${result.batchesPerRelease} batches)`,
    );
    return result;
  } finally {
    unsubscribe();
    await local.stop();
    client.destroy();
    stream.destroy();
  }
}

// ------------------------------------------------------------------ sustained load on the local stream

/** The stream function under load, on the main thread (beside the clients) or on a thread of its own. */
async function streamUnderLoad(ownThread: boolean): Promise<StreamThread> {
  if (ownThread)
    return startStreamThread({ endpoint: store.endpoint, tableName, latencyMs: LATENCY_MS, parallelization });
  const stream = streamFunction(LATENCY_MS);
  const { handler, figures, load } = busyMeter(stream.handler);
  const local = new LocalStream({ handler, parallelizationFactor: parallelization });
  return {
    push: (change) => local.push(change),
    load,
    drained: () => local.drained(),
    figures: async () => ({
      ...figures,
      batches: local.delivered,
      failed: local.failed.length,
      requests: stream.meter.records,
    }),
    stop: async () => {
      await local.stop();
      stream.destroy();
    },
  };
}

async function sustained(ownThread: boolean) {
  const kind = KINDS[0]!;
  const pool = ownThread ? 'load-own' : 'load';
  const stream = await streamUnderLoad(ownThread);
  let produced = 0;
  let producedDuringLoad = 0;
  let loading = false;
  let sequence = 0;
  const unsubscribe = store.onChange((change) => {
    if (change.tableName !== tableName) return;
    const probe = streamRecordOf(change, { eventID: 'probe', sequence: String(++sequence), stream: 'probe' });
    if (matchesFilter(probe)) {
      produced++;
      if (loading) producedDuringLoad++;
    }
    stream.push(change);
  });
  const clients = Array.from({ length: LOAD_CLIENTS }, (_, i) => instance(`claim-${i}`, LATENCY_MS));
  try {
    await createPool(pool, kind);
    await store.caughtUp();
    await stream.drained();
    const requestsBefore = (await stream.figures()).requests.length;
    produced = producedDuringLoad = 0;
    const ref = { kind: kind.kind, name: pool };
    const loadStart = performance.now();
    const loopBefore = performance.eventLoopUtilization();
    loading = true;
    stream.load('start');
    const until = loadStart + LOAD_SECONDS * 1000;
    let operations = 0;
    // Both counts a third into the load, once the stream has found its pace: the rates are taken from
    // there to the load's end, the same window for both.
    let mark: Promise<{ at: number; produced: number; handled: number }> | undefined;
    const marker = setTimeout(
      () => {
        const at = performance.now();
        const producedThen = producedDuringLoad;
        mark = stream.figures().then((f) => ({ at, produced: producedThen, handled: f.handledDuringLoad }));
      },
      (LOAD_SECONDS * 1000) / 3,
    );
    await Promise.all(
      clients.map(async (client, c) => {
        for (let n = 0; performance.now() < until; n++) {
          const name = `load-${c}-${n}`;
          await client.call('PUT', `claims/${name}`, claimBody(name, ref));
          await client.call('DELETE', `claims/${name}`);
          operations += 2;
        }
      }),
    );
    const loadEnd = performance.now();
    const mainThreadBusy = performance.eventLoopUtilization(loopBefore).utilization;
    loading = false;
    stream.load('end');
    clearTimeout(marker);
    const atLoadEnd = await stream.figures();
    const third = await mark!;
    const loadSeconds = (loadEnd - loadStart) / 1000;
    const windowSeconds = (loadEnd - third.at) / 1000;
    const streamRate = (atLoadEnd.handledDuringLoad - third.handled) / windowSeconds;
    const producedRate = (producedDuringLoad - third.produced) / windowSeconds;
    // Until the stream has handled everything and the counts agree with the objects themselves.
    let exactSince: number | undefined;
    let drained = false;
    void stream.drained().then(() => (drained = true));
    for (;;) {
      await store.caughtUp();
      const status = await poolStatus(kind, pool);
      let objects = 0;
      for await (const allocation of admin.table.poolAllocations(NAMESPACE, 'indices', pool)) {
        void allocation;
        objects++;
      }
      const exact =
        status?.allocated === objects && BigInt(status.free) === BigInt(status.total) - BigInt(objects);
      if (!exact) exactSince = undefined;
      else exactSince ??= performance.now();
      if (drained && exact) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const drainedAt = performance.now();
    const end = await stream.figures();
    const requests = end.requests.slice(requestsBefore);
    const handlersRate = producedDuringLoad / loadSeconds;
    const busySeconds = Math.max(0.001, atLoadEnd.busyDuringLoadMs / 1000);
    const result = {
      streamThread: ownThread ? 'its own' : 'the clients’',
      clients: LOAD_CLIENTS,
      seconds: round(loadSeconds, 1),
      latencyMs: LATENCY_MS,
      parallelization,
      operations,
      operationsPerSecond: round(operations / loadSeconds, 1),
      /** How busy the main thread's event loop was during the load (the clients, and the stream when it shares it). */
      mainThreadBusy: round(mainThreadBusy, 2),
      recordsProduced: produced,
      handlersRecordsPerSecond: round(handlersRate, 1),
      recordsHandled: end.handled,
      handledDuringLoad: atLoadEnd.handledDuringLoad,
      /** The stream's share of the load's records it had handled by the load's end. */
      handledShareAtLoadEnd: round(atLoadEnd.handledDuringLoad / Math.max(1, producedDuringLoad), 3),
      /** Records handled per second of the stream being busy (any batch in flight), during the load. */
      streamRecordsPerBusySecond: round(atLoadEnd.handledDuringLoad / busySeconds, 1),
      streamBusyShareDuringLoad: round(atLoadEnd.busyDuringLoadMs / (loadEnd - loadStart), 3),
      /**
       * Records per second of a lane's batch in flight, times the lanes: what the shard handles with its
       * lanes busy at once, as the burst keeps them (the union above counts a second busy when any one lane
       * is, and the lanes of a steady flow are seldom busy together).
       */
      streamRecordsPerLaneBusySecond: round(
        (atLoadEnd.handledDuringLoad / Math.max(0.001, atLoadEnd.batchMsDuringLoad / 1000)) * parallelization,
        1,
      ),
      /**
       * The stream's rate ÷ the handlers' over the whole load: records handled per second of the stream
       * being busy (any batch in flight, so the lanes' overlap is not counted twice: a floor on what it
       * could handle) ÷ records the handlers' writes put on the stream per second. Above 1: room to spare.
       */
      capacityRatio: round(atLoadEnd.handledDuringLoad / busySeconds / handlersRate, 2),
      /**
       * From a third into the load to its end: the records the stream finished per second ÷ the records
       * put on the stream per second. It cannot pass 1 (the stream handles only what was written): it is
       * 1 less the backlog's growth over the window, the records waiting or in flight at its end.
       */
      streamRecordsPerSecond: round(streamRate, 1),
      rateRatio: round(streamRate / producedRate, 2),
      lagSeconds: round(((exactSince ?? drainedAt) - loadEnd) / 1000, 2),
      drainedAfterSeconds: round((drainedAt - loadEnd) / 1000, 2),
      streamRequestsPerOperation: round(requests.length / Math.max(1, operations), 2),
      /** The stream function's requests and units per claim's life (a claim and its release), by operation. */
      streamPerLife: share(requests, Math.max(1, operations / 2)),
      /** Batches the stream function was handed, and records a batch on average. */
      batches: end.batches,
      recordsPerBatch: round(end.handled / Math.max(1, end.batches), 1),
      failedRecords: end.failed,
    };
    progress(
      `sustained, the stream on ${result.streamThread} thread (main thread ${round(mainThreadBusy * 100, 0)}% busy): ${result.operationsPerSecond} operations/s, handlers ${result.handlersRecordsPerSecond} records/s; ` +
        `stream ${result.streamRecordsPerSecond} records/s (ratio ${result.rateRatio}, when busy ${result.capacityRatio}; busy ${round(result.streamBusyShareDuringLoad * 100, 1)}%, ${result.streamRecordsPerBusySecond} records per busy s, ${result.streamRecordsPerLaneBusySecond} per lane-busy s × lanes, ${result.recordsPerBatch} a batch); ` +
        `handled ${round(result.handledShareAtLoadEnd * 100, 1)}% by the end; counts exact ${result.lagSeconds} s after`,
    );
    return result;
  } finally {
    unsubscribe();
    await stream.stop();
    for (const client of clients) client.destroy();
  }
}

const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();

const results: Record<string, unknown> = {
  commit,
  date: new Date().toISOString(),
  /** This shared machine's load (1-minute average) when the run started and ended: figures follow it. */
  loadAverage: { start: round(os.loadavg()[0]!, 1), end: 0 },
  parallelizationFactor: parallelization,
  method: [
    `Whole life: ${LIFE_CLAIMS} claims (PUT) by one client, the stream's work on their records, ${LIFE_CLAIMS} releases (DELETE), the stream's work on theirs; each function's requests counted on its own client by the SDK middleware of bench/measure.ts, per claim. The records of each phase go to the stream function once the phase is done, as one shard's event source mapping batches them (up to 100 a batch; ${parallelization} concurrent batch(es) per shard, records spread over them by item key).`,
    `Throughput: ${THROUGHPUT_CLAIMS} claims' records, then their releases' records (and the stream's own: the Recycle deletes), handed to the stream function at once on one shard (full batches, ${parallelization} concurrent), timed from the first batch to the last answer; ${LATENCY_MS} ms added to every DynamoDB call of the stream function's client, and none.`,
    `Sustained: ${LOAD_CLIENTS} clients, each its own instance and client with ${LATENCY_MS} ms added to every call, each claiming (PUT) and releasing (DELETE) in turn for ${LOAD_SECONDS} s, on the local stream emulation (lib/local/stream/emulation.ts, as npm start runs it), the stream function's client with ${LATENCY_MS} ms too. Lag: from the load's end until the pool's counts agree with its allocation objects (and the stream has drained). The stream's rate ÷ the handlers': records the stream handled per second it was busy (any batch in flight) ÷ records the handlers' writes put on the stream per second, over the whole load; and, from a third into the load to its end, records handled ÷ records written in the same window (at most 1: it is 1 less the backlog's growth).`,
    `Lone: one client, ${LIFE_CLAIMS} claims (PUT) one after another, then their releases (DELETE), each waited for until the stream is done with it; the local stream delivers each record as its own batch (batch size 1), and again batched as npm start batches them (up to 100 a batch, gathered for ${LOCAL_BATCH_WINDOW_MS} ms; the deployed mapping gathers for up to 1 s).`,
    'Store: dynalite in memory on a worker thread of this process (bench/store.ts), the clients on the main thread; the stream function on the main thread, except in the sustained row that gives it a thread of its own (bench/stream-thread.ts), as a Lambda function has its own CPU.',
  ],
};
if (!only || only === 'life') {
  results.wholeLife = [];
  for (const [index, kind] of KINDS.entries())
    (results.wholeLife as unknown[]).push(await wholeLife(kind, index));
}
if (!only || only === 'lone') {
  results.lone = await lone();
  results.loneGathered = await lone(true);
}
if (!only || only === 'throughput') {
  results.throughput = [await throughput(LATENCY_MS), await throughput(0)];
  // One batch at a time too: what the concurrent batches of one pool add or cost.
  if (parallelization > 1)
    (results.throughput as unknown[]).push(await throughput(LATENCY_MS, 1), await throughput(0, 1));
}
if (!only || only === 'sustained') {
  // As deployed, the stream function has a CPU of its own; beside the clients, as the bench ran it before.
  results.sustained = await sustained(true);
  results.sustainedSharedThread = await sustained(false);
}

admin.destroy();
await store.close();
(results.loadAverage as { end: number }).end = round(os.loadavg()[0]!, 1);
if (!only) writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
else console.log(JSON.stringify(results, null, 2));
progress(`done${only ? '' : `: ${resultsFile}`}`);
