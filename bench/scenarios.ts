/**
 * The scenarios of issue 4: claims through the real claim handler against filled pools, one client and 32,
 * an exhausted pool and a repeated claim. Each claim's figures are the requests its handler instance sent
 * while answering it.
 */
import { performance } from 'node:perf_hooks';
import { concentration, type SpaceConcentration } from './concentration.ts';
import { BenchPool, type Materialised, type Pattern } from './fill.ts';
import { claimBody, startInstance, type Instance } from './instance.ts';
import {
  distribution,
  round,
  roundTrips,
  totals,
  unitsOf,
  type Distribution,
  type RequestRecord,
} from './measure.ts';

/** Claims measured per one-client scenario (fewer where the pool has fewer free values). */
export const CLAIMS_PER_SCENARIO = 200;
/** The stream function's pool refresh runs every this many claims (about one stream batch). */
export const REFRESH_EVERY = 50;
export const CONCURRENT_CLIENTS = 32;
export const CONCURRENT_CLAIMS = 2000;
/**
 * How much of a huge pool a random fill materialises: claims ÷ (1 − fill) × this, rounded up to blocks, so
 * the window keeps at least this many times the measured claims' worth of free values.
 */
export const RANDOM_WINDOW_FACTOR = 1.25;

export interface Env {
  endpoint: string;
  tableName: string;
  /** Creates pools and fills them; not counted. */
  admin: Instance;
  /** Runs the stream function's pool refresh; counted apart from the claims. */
  stream: Instance;
}

export interface ClaimSample {
  name: string;
  value?: string;
  reason?: string;
  status: number;
  requests: number;
  /** Sequential round trips to the store (requests in flight together count once; measure.ts). */
  roundTrips: number;
  /** Item operations the store served (a BatchGetItem counts its keys). */
  itemOperations: number;
  units: number;
  conditionalFailures: number;
  errors: number;
  ms: number;
  /** When the claim was sent (performance.now()). */
  startedAt: number;
  records: RequestRecord[];
}

export interface ScenarioResult {
  name: string;
  pool: string;
  fill: number;
  pattern: Pattern;
  clients: number;
  /** A variant of the issue's scenario, also in the name. */
  variant?: string;
  claims: number;
  requestsPerClaim: Distribution;
  /** Sequential round trips per claim (requests in flight together count once). */
  roundTripsPerClaim: Distribution;
  /**
   * Item operations per claim (a BatchGetItem counts its keys): what the efficiency compares with raw
   * puts, one item each.
   */
  itemOperationsPerClaim: Distribution;
  capacityPerClaim: Distribution;
  claimsPerSecond: number;
  duplicates: number;
  conditionalFailuresPerClaim: number;
  /** Claims that did not end Allocated (201 with a value); expected 0. */
  notAllocated: number;
  /** Requests that failed other than by a condition. */
  requestErrors: number;
  /** HTTP attempts the SDK repeated (each command counts once in requests). */
  sdkRetries: number;
  /** Mean requests per claim by operation. */
  operationsPerClaim: Record<string, number>;
  /**
   * The claims at or above the p99 of capacity units: how many, their mean lost puts and operations, and
   * how many were sent in the run's first second (the first claims of every instance start together).
   */
  tail?: {
    claims: number;
    conditionalFailures: number;
    operations: Record<string, number>;
    inFirstSecond: number;
  };
  /** Mean capacity units per claim by operation (table as reported, plus the estimates). */
  capacityByOperation: Record<string, number>;
  /**
   * Where a claim's time goes (means, ms): the whole claim through the handler; the part spent in its
   * SDK calls (send to answer: the SDK's work, the round trip and the store's work; calls in flight
   * together counted once); the rest, which is
   * the handler's own; and each operation's mean per request. With 32 clients, waits for the one core
   * the clients share are in both parts.
   */
  time: {
    claimMs: number;
    inRequestsMs: number;
    outsideRequestsMs: number;
    requestMs: Record<string, number>;
  };
  materialised: Materialised;
  stream: {
    /** Claims between refreshes; null when the refresh does not run during the claims. */
    refreshEvery: number | null;
    refreshes: number;
    requestsPerClaim: number;
    capacityPerClaim: number;
    busyShare?: number;
    note?: string;
  };
  /** Requests of the measured claims to allocation blocks outside the materialised window (must be 0). */
  requestsOutsideWindow?: number;
  concentration?: SpaceConcentration[];
  elapsedSeconds: number;
}

/** One claim through an instance, with what its handler sent. */
export async function claimOnce(instance: Instance, pool: BenchPool, name: string): Promise<ClaimSample> {
  const mark = instance.meter.mark();
  const started = performance.now();
  const startedAt = started;
  const answer = await instance.call('POST', 'claims', claimBody(name, pool.ref));
  const ms = performance.now() - started;
  const taken = answer.body?.status?.value as string | undefined;
  if (taken !== undefined) pool.noteChange(taken, true); // its allocation's INSERT, for the stream
  const records = instance.meter.since(mark);
  const sum = totals(records);
  return {
    name,
    value: answer.body?.status?.value as string | undefined,
    reason: answer.body?.status?.conditions?.[0]?.reason as string | undefined,
    status: answer.status,
    requests: sum.requests,
    roundTrips: roundTrips(records),
    itemOperations: records.reduce((total, record) => total + record.items, 0),
    units: sum.units,
    conditionalFailures: sum.conditionalFailures,
    errors: sum.errors,
    ms,
    startedAt,
    records,
  };
}

/** Repeats of values among the answers, and values the fill already held. */
function duplicatesOf(pool: BenchPool, samples: readonly ClaimSample[]): number {
  const seen = new Set<string>();
  let duplicates = 0;
  for (const sample of samples) {
    if (sample.value === undefined) continue;
    const ordinal = pool.ordinalOfValue(sample.value);
    if (seen.has(sample.value) || (ordinal !== undefined && pool.filled(ordinal))) duplicates++;
    seen.add(sample.value);
  }
  return duplicates;
}

/** Mean per claim, by operation, of a figure of each request. */
function perOperation(samples: readonly ClaimSample[], figure: (record: RequestRecord) => number) {
  const sums: Record<string, number> = {};
  for (const sample of samples)
    for (const record of sample.records)
      sums[record.operation] = (sums[record.operation] ?? 0) + figure(record);
  return Object.fromEntries(
    Object.entries(sums).map(([operation, sum]) => [operation, round(sum / samples.length, 3)]),
  );
}

/** The time some request of the claim was in flight (requests in flight together count once). */
function inFlightMs(records: readonly RequestRecord[]): number {
  let total = 0;
  let until = -Infinity;
  for (const record of [...records].sort((a, b) => a.sentAt - b.sentAt)) {
    const from = Math.max(record.sentAt, until);
    if (record.answeredAt > from) total += record.answeredAt - from;
    until = Math.max(until, record.answeredAt);
  }
  return total;
}

function timeOf(samples: readonly ClaimSample[]): ScenarioResult['time'] {
  const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const claimMs = mean(samples.map((sample) => sample.ms));
  const inRequestsMs = mean(samples.map((sample) => inFlightMs(sample.records)));
  const byOperation = new Map<string, number[]>();
  for (const record of samples.flatMap((sample) => sample.records)) {
    const list = byOperation.get(record.operation) ?? [];
    list.push(record.ms);
    byOperation.set(record.operation, list);
  }
  return {
    claimMs: round(claimMs, 2),
    inRequestsMs: round(inRequestsMs, 2),
    outsideRequestsMs: round(claimMs - inRequestsMs, 2),
    requestMs: Object.fromEntries(
      [...byOperation].map(([operation, list]) => [operation, round(mean(list), 2)]),
    ),
  };
}

/** Requests to this pool's allocation blocks (or summaries) outside [low, high) (high undefined: no upper bound). */
function outsideWindow(
  pool: BenchPool,
  samples: readonly ClaimSample[],
  low: bigint,
  high: bigint | undefined,
): number {
  const prefix = pool.blockPrefix();
  let outside = 0;
  for (const sample of samples) {
    for (const record of sample.records) {
      const keys = [...record.reads, ...record.writes.map((write) => write.key ?? '')];
      const off = keys.some((key) => {
        if (!key.startsWith(prefix)) return false;
        const rest = key.slice(prefix.length);
        if (rest.startsWith('G')) {
          // A group summary (64 blocks): outside only if none of its blocks is in the window (a claim
          // uses only the part of it from where its search starts).
          const first = BigInt(`0x${rest.slice(1)}`) * 64n;
          return first + 63n < low || (high !== undefined && first >= high);
        }
        const block = BigInt(`0x${rest}`);
        return block < low || (high !== undefined && block >= high);
      });
      if (off) outside++;
    }
  }
  return outside;
}

function summarise(
  pool: BenchPool,
  fill: number,
  clients: number,
  samples: readonly ClaimSample[],
  claimsPerSecond: number,
  stream: ScenarioResult['stream'],
  elapsedSeconds: number,
  variant?: string,
): ScenarioResult {
  const allocated = samples.filter((sample) => sample.status === 201 && sample.value !== undefined);
  const percent = `${Math.round(fill * 100)}%`;
  const pattern = fill === 0 ? `${percent} (${pool.pattern})` : `${percent} ${pool.pattern}`;
  const result: ScenarioResult = {
    name: `${pool.shape.title}, ${pattern}, ${clients} client${clients === 1 ? '' : 's'}${variant ? ` (${variant})` : ''}`,
    pool: pool.shape.label,
    fill,
    pattern: pool.pattern,
    clients,
    claims: samples.length,
    requestsPerClaim: distribution(samples.map((sample) => sample.requests)),
    roundTripsPerClaim: distribution(samples.map((sample) => sample.roundTrips)),
    itemOperationsPerClaim: distribution(samples.map((sample) => sample.itemOperations)),
    capacityPerClaim: distribution(samples.map((sample) => sample.units)),
    claimsPerSecond: round(claimsPerSecond, 1),
    duplicates: duplicatesOf(pool, samples),
    conditionalFailuresPerClaim: round(
      samples.reduce((sum, sample) => sum + sample.conditionalFailures, 0) / samples.length,
      4,
    ),
    notAllocated: samples.length - allocated.length,
    requestErrors: samples.reduce((sum, sample) => sum + sample.errors, 0),
    sdkRetries: samples.reduce(
      (sum, sample) => sum + sample.records.reduce((n, record) => n + record.attempts - 1, 0),
      0,
    ),
    operationsPerClaim: perOperation(samples, () => 1),
    capacityByOperation: perOperation(samples, unitsOf),
    time: timeOf(samples),
    materialised: pool.materialised!,
    stream,
    elapsedSeconds: round(elapsedSeconds, 2),
  };
  if (variant) result.variant = variant;
  if (clients > 1) {
    const first = Math.min(...samples.map((sample) => sample.startedAt));
    const tail = samples.filter((sample) => sample.units >= result.capacityPerClaim.p99);
    result.tail = {
      claims: tail.length,
      conditionalFailures: round(tail.reduce((sum, s) => sum + s.conditionalFailures, 0) / tail.length, 2),
      operations: perOperation(tail, () => 1),
      inFirstSecond: tail.filter((sample) => sample.startedAt - first < 1000).length,
    };
  }
  if (pool.shape.huge && pool.virtualPrefix > 0n)
    result.requestsOutsideWindow = outsideWindow(pool, samples, pool.blockOf(pool.virtualPrefix), undefined);
  if (pool.shape.huge && pool.randomWindow > 0n)
    result.requestsOutsideWindow = outsideWindow(
      pool,
      samples,
      0n,
      pool.blockOf(pool.randomWindow - 1n) + 1n,
    );
  return result;
}

function streamFigures(
  env: Env,
  pool: BenchPool,
  mark: number,
  claims: number,
  refreshes: number,
  refreshEvery: number,
): ScenarioResult['stream'] {
  const sum = totals(env.stream.meter.since(mark));
  const figures: ScenarioResult['stream'] = {
    refreshEvery: Number.isFinite(refreshEvery) ? refreshEvery : null,
    refreshes,
    requestsPerClaim: round(sum.requests / claims, 3),
    capacityPerClaim: round(sum.units / claims, 3),
  };
  return figures;
}

/** Free values of the pool at this fill (capped at the scenario's claims). */
function claimsFor(pool: BenchPool): number {
  if (pool.shape.huge) return CLAIMS_PER_SCENARIO;
  const taken = BigInt(pool.materialised!.taken);
  const free = pool.total - taken;
  return Number(free < BigInt(CLAIMS_PER_SCENARIO) ? free : BigInt(CLAIMS_PER_SCENARIO));
}

export interface OneClientRun {
  result: ScenarioResult;
  samples: ClaimSample[];
  instance: Instance;
}

/**
 * Scenario 1: one client (one handler instance) makes claims one after another; the stream's refresh runs
 * every REFRESH_EVERY claims, between claims. Claims per second counts the handler's time only.
 */
export async function oneClientScenario(
  env: Env,
  pool: BenchPool,
  fill: number,
  tag: string,
): Promise<OneClientRun> {
  const claims = claimsFor(pool);
  const instance = startInstance(env.endpoint, env.tableName);
  const streamMark = env.stream.meter.mark();
  const samples: ClaimSample[] = [];
  let refreshes = 0;
  const started = performance.now();
  for (let i = 0; i < claims; i++) {
    samples.push(await claimOnce(instance, pool, `${tag}-${i}`));
    if ((i + 1) % REFRESH_EVERY === 0 && i + 1 < claims) {
      await pool.refresh(env.stream.context);
      refreshes++;
    }
  }
  const elapsed = (performance.now() - started) / 1000;
  const handlerSeconds = samples.reduce((sum, sample) => sum + sample.ms, 0) / 1000;
  const result = summarise(
    pool,
    fill,
    1,
    samples,
    claims / handlerSeconds,
    streamFigures(env, pool, streamMark, claims, refreshes, REFRESH_EVERY),
    elapsed,
  );
  return { result, samples, instance };
}

/**
 * Scenario 2: 32 instances, each its own client and search memory, claim concurrently from one pool until
 * CONCURRENT_CLAIMS are made; the stream's refresh runs alongside, again after every `refreshEvery` claims
 * (one at a time, as the stream function processes one batch at a time); Infinity: not during the run.
 */
export async function concurrentScenario(
  env: Env,
  pool: BenchPool,
  fill: number,
  tag: string,
  options: { refreshEvery?: number; variant?: string } = {},
): Promise<{ result: ScenarioResult; samples: ClaimSample[] }> {
  const refreshEvery = options.refreshEvery ?? REFRESH_EVERY;
  const instances = Array.from({ length: CONCURRENT_CLIENTS }, () =>
    startInstance(env.endpoint, env.tableName),
  );
  const marks = instances.map((instance) => instance.meter.mark());
  const streamMark = env.stream.meter.mark();
  const samples: ClaimSample[] = [];
  let issued = 0;
  let done = 0;
  let running = true;
  let refreshes = 0;
  let streamBusyMs = 0;
  const start = Date.now();
  const started = performance.now();
  const stream = (async () => {
    let refreshedAt = 0;
    while (running) {
      if (done - refreshedAt >= refreshEvery) {
        refreshedAt = done;
        const t = performance.now();
        await pool.refresh(env.stream.context);
        streamBusyMs += performance.now() - t;
        refreshes++;
      } else await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  await Promise.all(
    instances.map(async (instance) => {
      while (issued < CONCURRENT_CLAIMS) {
        const i = issued++;
        samples.push(await claimOnce(instance, pool, `${tag}-${i}`));
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  running = false;
  await stream;
  const figures = streamFigures(env, pool, streamMark, samples.length, refreshes, refreshEvery);
  const result = summarise(
    pool,
    fill,
    CONCURRENT_CLIENTS,
    samples,
    samples.length / elapsed,
    { ...figures, busyShare: round(streamBusyMs / 1000 / elapsed, 3) },
    elapsed,
    options.variant,
  );
  const written = [
    ...instances.flatMap((instance, i) => instance.meter.since(marks[i]!)),
    ...env.stream.meter.since(streamMark),
  ];
  result.concentration = concentration(written, samples.length, start);
  for (const instance of instances) instance.destroy();
  return { result, samples };
}

/** Scenario 3a: claims against a pool with no free value, after the stream's refresh. */
export async function exhaustedClaims(
  env: Env,
  pool: BenchPool,
  instance: Instance,
  tag: string,
  count: number,
) {
  await pool.refresh(env.stream.context);
  const samples: ClaimSample[] = [];
  for (let i = 0; i < count; i++) samples.push(await claimOnce(instance, pool, `${tag}-${i}`));
  return samples;
}

/** Scenario 3b: PUT of claims that exist, with the same spec. */
export async function repeatedClaims(instance: Instance, pool: BenchPool, names: readonly string[]) {
  const samples: { name: string; status: number; requests: number; roundTrips: number; units: number }[] = [];
  for (const name of names) {
    const mark = instance.meter.mark();
    const answer = await instance.call('PUT', `claims/${name}`, claimBody(name, pool.ref));
    const records = instance.meter.since(mark);
    const sum = totals(records);
    samples.push({
      name,
      status: answer.status,
      requests: sum.requests,
      roundTrips: roundTrips(records),
      units: sum.units,
    });
  }
  return samples;
}
