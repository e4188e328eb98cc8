/**
 * The benchmark of issue 4 (`npm run bench`): claims through the real claim handler against the embedded
 * dynalite (in memory, in this process), counted per claim by an SDK middleware; raw conditional puts on
 * the same store; write concentration; the Lambda bundles. Prints a table and writes bench/results.json.
 */
import { renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { measureBundles, COLD_LOADS } from './bundles.ts';
import { MIN_WINDOW_WRITES, PARTITION_WRITES_PER_SECOND, type SpaceConcentration } from './concentration.ts';
import { BenchPool, FIRST_WINDOW, POOL_SHAPES, type Pattern } from './fill.ts';
import { startInstance } from './instance.ts';
import { pathFigure, putNewClaims, releaseClaims, type PathSample } from './claim-path.ts';
import { median, round } from './measure.ts';
import { rawAround, rawConditionalPuts, RAW_SECONDS, type RawResult } from './raw.ts';
import { allChecks, check, describeCheck, scenarioTable } from './report.ts';
import { benchTable, startStoreThread } from './store.ts';
import {
  CLAIMS_PER_SCENARIO,
  CONCURRENT_CLAIMS,
  CONCURRENT_CLIENTS,
  concurrentScenario,
  exhaustedClaims,
  oneClientScenario,
  RANDOM_WINDOW_FACTOR,
  REFRESH_EVERY,
  repeatedClaims,
  type ClaimSample,
  type Env,
  type ScenarioResult,
} from './scenarios.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const FILLS = [0, 0.5, 0.9, 0.99];
const PATTERNS: Pattern[] = ['first', 'random'];
const EXHAUSTED_SAMPLES = 5;
const REPEATED_SAMPLES = 10;
/** New claims by PUT, and releases of claims, measured apart from the POST rows. */
const PATH_SAMPLES = 50;
const root = fileURLToPath(new URL('..', import.meta.url));
const resultsFile = fileURLToPath(new URL('results.json', import.meta.url));

const started = performance.now();
const elapsed = () => (performance.now() - started) / 1000;
const progress = (message: string) => console.error(`[${elapsed().toFixed(1).padStart(6)} s] ${message}`);

const store = await startStoreThread();
const tableName = await benchTable(store, 'allot-bench');
const env: Env = {
  endpoint: store.endpoint,
  tableName,
  admin: startInstance(store.endpoint, tableName, 'api'),
  stream: startInstance(store.endpoint, tableName, 'stream'),
};

/** A random fill of a huge pool materialises [0, W): enough free values for the claims, FACTOR times over. */
const randomWindowFor = (fill: number) =>
  BigInt(Math.ceil(((CLAIMS_PER_SCENARIO / (1 - fill)) * RANDOM_WINDOW_FACTOR) / 64)) * 64n;
const randomWindows: Record<string, number> = {};

const scenarios: ScenarioResult[] = [];
let exhausted: ClaimSample[] = [];
let repeated: Awaited<ReturnType<typeof repeatedClaims>> = [];
let putNew: PathSample[] = [];
let released: PathSample[] = [];
let fillSeconds = 0;
/** Raw puts around the scenarios the efficiency compares them with (see rawAround). */
const pairedRaw: Record<
  '1' | '32',
  { before: RawResult; after: RawResult; requestsPerSecond: number } | undefined
> = { '1': undefined, '32': undefined };
/** The scenario the one-client efficiency is taken from. */
const efficiencyScenario = (label: string, pattern: Pattern, fill: number) =>
  label === 'index-2^16' && pattern === 'random' && fill === 0.5;

for (const shape of POOL_SHAPES) {
  for (const pattern of PATTERNS) {
    const short = shape.label.replace(/[^a-z0-9]+/g, '');
    // A random fill of a huge pool gets a fresh pool per level (its window grows with the fill).
    const poolPerLevel = shape.huge && pattern === 'random';
    let pool: BenchPool | undefined;
    for (const fill of FILLS) {
      const percent = Math.round(fill * 100);
      if (!pool || poolPerLevel) {
        pool = new BenchPool(
          shape,
          pattern,
          poolPerLevel ? `${short}-${pattern}-${percent}` : `${short}-${pattern}`,
        );
        await pool.create(env.admin);
      }
      const window = poolPerLevel ? randomWindowFor(fill) : 0n;
      if (poolPerLevel && fill > 0) randomWindows[`${Math.round(fill * 100)}%`] = Number(window);
      const fillStarted = performance.now();
      await pool.fill(env.admin.table, fill, window);
      await pool.refresh(env.admin.context); // the stream's tally of the fill (not counted)
      fillSeconds += (performance.now() - fillStarted) / 1000;
      const tag = `${short}-${pattern}-${percent}`;
      const current = pool;
      const run = efficiencyScenario(shape.label, pattern, fill)
        ? await rawAround(store.endpoint, tableName, 1, () =>
            oneClientScenario(env, current, fill, tag),
          ).then(({ result, ...raw }) => ((pairedRaw['1'] = raw), result))
        : await oneClientScenario(env, pool, fill, tag);
      scenarios.push(run.result);
      progress(
        `${run.result.name}: ${run.result.claims} claims, requests median ${run.result.requestsPerClaim.median}, ` +
          `fill ${pool.materialised?.items} items`,
      );
      const made: { name: string; value?: string }[] = [...run.samples];

      if (shape.label === 'index-2^8' && pattern === 'first' && fill === 0) {
        repeated = await repeatedClaims(
          run.instance,
          pool,
          run.samples.slice(0, REPEATED_SAMPLES).map((sample) => sample.name),
        );
        putNew = await putNewClaims(
          run.instance,
          pool,
          Array.from({ length: PATH_SAMPLES }, (_, i) => `${tag}-put-${i}`),
        );
        made.push(...putNew);
        released = await releaseClaims(
          run.instance,
          run.samples.slice(0, PATH_SAMPLES).map((sample) => sample.name),
        );
      }
      if (shape.label === 'index-2^8' && pattern === 'first' && fill === 0.99) {
        exhausted = await exhaustedClaims(env, pool, run.instance, `${tag}-exhausted`, EXHAUSTED_SAMPLES);
        made.push(...exhausted);
      }
      run.instance.destroy();
      await pool.deleteClaims(env.admin.table, made);

      if (efficiencyScenario(shape.label, pattern, fill)) {
        // Scenario 2: the stream's refresh runs alongside, as in production.
        await pool.refresh(env.admin.context);
        const { result: concurrent, ...raw } = await rawAround(
          store.endpoint,
          tableName,
          CONCURRENT_CLIENTS,
          () => concurrentScenario(env, current, fill, `${tag}-c32`),
        );
        pairedRaw['32'] = raw;
        scenarios.push(concurrent.result);
        progress(
          `${concurrent.result.name}: requests median ${concurrent.result.requestsPerClaim.median}, ` +
            `${concurrent.result.claimsPerSecond} claims/s`,
        );
        await pool.deleteClaims(env.admin.table, concurrent.samples);
      }
    }
  }
}

progress('raw conditional puts, unmetered, for reference');
const unmetered = { metered: false };
const plain1 = await rawConditionalPuts(store.endpoint, tableName, 1, 'allocation', unmetered);
const plain32 = await rawConditionalPuts(
  store.endpoint,
  tableName,
  CONCURRENT_CLIENTS,
  'allocation',
  unmetered,
);
const tiny1 = await rawConditionalPuts(store.endpoint, tableName, 1, 'tiny', unmetered);
const tiny32 = await rawConditionalPuts(store.endpoint, tableName, CONCURRENT_CLIENTS, 'tiny', unmetered);
const raw1 = pairedRaw['1']!;
const raw32 = pairedRaw['32']!;

const concurrent = scenarios.find((scenario) => scenario.clients === CONCURRENT_CLIENTS)!;
const oneClient = scenarios.find(
  (scenario) => scenario.clients === 1 && efficiencyScenario(scenario.pool, scenario.pattern, scenario.fill),
)!;
// Item operations, not requests: a claim's BatchGetItem asks the store for two items, as two GetItems did,
// and the raw puts it is compared with are one item each.
const efficiency =
  (concurrent.claimsPerSecond * concurrent.itemOperationsPerClaim.median) / raw32.requestsPerSecond;
const efficiencyOneClient =
  (oneClient.claimsPerSecond * oneClient.itemOperationsPerClaim.median) / raw1.requestsPerSecond;

env.admin.destroy();
env.stream.destroy();
await store.close();
const storeSeconds = elapsed();

progress('bundles: cdk synth and cold loads');
const { bundles, synthSeconds } = await measureBundles(root);

// ---------------------------------------------------------------- figures and targets

const spaces = concurrent.concentration ?? [];
const shares = spaces.flatMap((space) => (space.busiestShare === null ? [] : [space.busiestShare]));
const busiestKeyShare = shares.length > 0 ? Math.max(...shares) : null;
const ceilings = spaces.flatMap((space) =>
  space.ceilingClaimsPerSecond === null ? [] : [space.ceilingClaimsPerSecond],
);
const perPoolCeiling = ceilings.length > 0 ? Math.min(...ceilings) : null;
const exhaustedFigure = {
  requests: Math.max(...exhausted.map((sample) => sample.requests)),
  requestsMedian: median(exhausted.map((sample) => sample.requests)),
  capacity: round(Math.max(...exhausted.map((sample) => sample.units)), 3),
  reasons: [...new Set(exhausted.map((sample) => sample.reason))],
  samples: exhausted.length,
  operations: exhausted[0]?.records.map((record) => record.operation) ?? [],
};
const newByPut = pathFigure(putNew);
const release = pathFigure(released);
const repeatedFigure = {
  roundTrips: Math.max(...repeated.map((sample) => sample.roundTrips)),
  requests: Math.max(...repeated.map((sample) => sample.requests)),
  requestsMedian: median(repeated.map((sample) => sample.requests)),
  capacity: round(Math.max(...repeated.map((sample) => sample.units)), 3),
  statuses: [...new Set(repeated.map((sample) => sample.status))],
  samples: repeated.length,
};
const { perScenario, overall } = allChecks({
  scenarios,
  exhausted: exhaustedFigure,
  repeated: repeatedFigure,
  newByPut,
  efficiency,
  concentration: spaces,
  bundles,
});

const notes = [
  'Store: dynalite 4 in memory (lib/local/store/dynalite.ts), in this process on a worker thread of its own, so the store and the clients (handlers, stream tally, fills) each have one of the two cores. Requests per claim do not depend on the store; claims/s and raw puts/s are this machine and this store, not DynamoDB.',
  'Requests per claim: every SDK command the claim handler instance sent while answering that claim (its own DynamoDB client and counting middleware). Median: mean of the middle two; p99: nearest rank.',
  "Capacity per claim: table units as dynalite reports them (ReturnConsumedCapacity TOTAL on every command), plus estimates. Index units are estimated from the request: a put whose item carries gpk → allocations index (projection ALL) +ceil(item bytes/1 KB); carrying wpk → waiting index (KEYS_ONLY) +1; an UpdateItem that SETs wpk → +1 (a REMOVE of wpk counts 0: the request does not show whether the item had one); an UpdateItem/DeleteItem of an allocation item (pk A#…, always carries gpk) → +1. A failed conditional write: +ceil(item bytes/1 KB) for a put, +1 otherwise (DynamoDB charges it, dynalite reports none). An empty Query: +0.5 (eventually consistent) or +1 (strong), DynamoDB's minimum, where dynalite reports 0.",
  `Stream function: its pool refresh (refreshPool → lib/service/counts/tally.ts: the batch's slot changes into the block summaries and the pool's counts and search hint) runs every ${REFRESH_EVERY} claims (about one stream batch) with those claims' slot changes, between claims in the one-client scenarios and alongside the claims in the 32-client scenario; it also runs after each fill, with the fill's changes (in chunks of 64 blocks). Its requests are not counted per claim; they are reported apart (stream req/claim). The stream function's per-record work (reading the claim and allocation each record names) is not run.`,
  'Claims/s, one client: claims ÷ the handler time of those claims (the pauses for the stream refresh between claims are excluded). 32 clients: claims ÷ wall time, with the stream refresh running alongside on the same store (its busy share of the run is reported; in production it has its own compute and DynamoDB serves its reads apart, here it competes with the claims for the store thread).',
  `Fills: allocation objects built with newAllocation for stand-in claims fill-<n> (uid random; the claim items are not written), written with Table.writeAllocations, then the stream's refreshPool with their slot changes. Fill levels grow (0 → 50% → 90% → 99%): the measured claims and their allocation objects are deleted between levels, so each level is exactly its fill. "first": ordinals [0, N); "random": a uniformly random N-subset (prefixes of one random permutation). N = floor(fill × total).`,
  `Pools of 2^8 and 2^16 values are materialised whole. index 2^32 and IPv6 /64: "first N" materialises only [N − ${FIRST_WINDOW}, N) and, after the stream's tally of the window, writes the counts it would hold for the whole fill (every value below N held, the hint at N; PoolCounts.allocated, a JS number, is capped at 2^53 − 2^20 for the /64); requestsOutsideWindow counts claim requests to blocks below the window (must be 0). "random": a fresh pool per level, with exactly floor(fill × W) values of the window [0, W) taken at random, W = claims ÷ (1 − fill) × ${RANDOM_WINDOW_FACTOR} rounded up to blocks of 64 (${JSON.stringify(randomWindows)}), so the window keeps more free values than the claims measured; the real refreshPool tallies it, so the pool's counts (allocated, held) are the window's while the search hint is what a whole-pool fill gives; requestsOutsideWindow counts claim requests to blocks past the window (must be 0).`,
  `Write concentration (32-client scenario): writes by partition-key value per key space (table pk; allocations index gpk; waiting index wpk), in 1-second windows by send time, from the claim handlers and the stream's refresh; a failed conditional put counts as a table write (the partition served it) but not an index write. Windows with fewer than ${MIN_WINDOW_WRITES} writes in a key space are ignored. Ceiling per key space = ${PARTITION_WRITES_PER_SECOND} ÷ (busiest share × that space's writes per claim) claims/s; perPoolCeilingClaimsPerSecond is the lowest over the key spaces.`,
  `Raw conditional puts: PutItem with attribute_not_exists(pk) of fresh unique keys, same table and store, ${RAW_SECONDS} s each, with 1 and ${CONCURRENT_CLIENTS} clients (each its own SDK client), after one warm-up put per client. The item is exactly the allocation object a claim puts (Table.putAllocation: its record, key and allocations-index attributes), so each raw put asks of the store what a claim's put does. The clients carry the same counting middleware as the claims' clients (it adds ReturnConsumedCapacity and records each request), so both sides of the ratio pay for the benchmark's bookkeeping alike. This machine's speed drifts (a shared host: raw rates varied by 1.5× between runs minutes apart), so the baseline is taken just before and just after the scenario it is compared with, and their mean is used. Efficiency = claims/s × median item operations/claim (requests, a BatchGetItem counting its keys: the items the store serves, as a raw put is one) ÷ raw puts/s (32 clients: the 32-client scenario; one client: index 2^16, 50% random, 1 client). rawUnmeteredPutsPerSecond: the same puts without the middleware, and tiny items {pk, sk, t}, at the end of the run, for reference.`,
  `Bundles: npx cdk synth --quiet into a temporary folder, each AWS::Lambda::Function's asset (Metadata aws:asset:path)/index.mjs. Cold load: the import of the bundle in a fresh node process (${process.version}, ${os.arch()}; Lambda runs nodejs24.x on arm64), timed inside that process, median of ${COLD_LOADS}, with the function's environment as deployed (NODE_OPTIONS=--enable-source-maps); coldLoadWithoutSourceMapsMs without it. KB = 1000 bytes.`,
];

const results = {
  generatedAt: new Date().toISOString(),
  machine: { node: process.version, cpus: os.cpus().length, arch: os.arch() },
  elapsedSeconds: round(elapsed(), 1),
  phases: { storeSeconds: round(storeSeconds, 1), fillSeconds: round(fillSeconds, 1), synthSeconds },
  settings: {
    claimsPerScenario: CLAIMS_PER_SCENARIO,
    refreshEvery: REFRESH_EVERY,
    concurrentClients: CONCURRENT_CLIENTS,
    concurrentClaims: CONCURRENT_CLAIMS,
    firstWindow: Number(FIRST_WINDOW),
    randomWindows,
    rawSeconds: RAW_SECONDS,
  },
  notes,
  scenarios,
  exhaustedClaim: exhaustedFigure,
  repeatedClaim: repeatedFigure,
  newClaimByPut: newByPut,
  release,
  rawConditionalPutsPerSecond: { '1': raw1.requestsPerSecond, '32': raw32.requestsPerSecond },
  rawUnmeteredPutsPerSecond: {
    allocation: { '1': plain1.requestsPerSecond, '32': plain32.requestsPerSecond },
    tiny: { '1': tiny1.requestsPerSecond, '32': tiny32.requestsPerSecond },
  },
  raw: [raw1.before, raw1.after, raw32.before, raw32.after, plain1, plain32, tiny1, tiny32],
  efficiency: round(efficiency, 3),
  efficiencyOneClient: round(efficiencyOneClient, 3),
  /** The one-client scenario the efficiency above is taken from. */
  efficiencyOneClientScenario: oneClient.name,
  busiestKeyShare,
  perPoolCeilingClaimsPerSecond: perPoolCeiling,
  concentration: spaces,
  bundles,
  targets: [...[...perScenario.values()].flat(), ...overall],
};
// Formatted as the repository's prettier formats JSON, so `npm run lint` stays clean after a run.
const formatted = await prettier.format(JSON.stringify(results, null, 2), {
  ...(await prettier.resolveConfig(resultsFile)),
  parser: 'json',
});
const temporary = `${resultsFile}.tmp`;
writeFileSync(temporary, formatted);
renameSync(temporary, resultsFile);

// ---------------------------------------------------------------- the printed report

const out: string[] = [];
out.push('Allot benchmark (issue 4): claims through the real claim handler, embedded dynalite in memory');
out.push('');
out.push(scenarioTable(scenarios, perScenario));
out.push('');
out.push(
  `Exhausted pool (2^8, fully allocated, tallied): a new claim took ${exhaustedFigure.requests} requests (${exhaustedFigure.operations.join(', ')}), ${exhaustedFigure.capacity} capacity units; answer ${exhaustedFigure.reasons.join(', ')}`,
);
out.push(
  `Repeated claim (PUT, same name and spec, already allocated): ${repeatedFigure.requests} requests, ${repeatedFigure.capacity} capacity units; status ${repeatedFigure.statuses.join(', ')}`,
);
const pathLine = (figure: typeof release) =>
  `requests ${figure.requests.median} / ${figure.requests.p99}, round trips ${figure.roundTrips.median} / ${figure.roundTrips.p99}, capacity units ${figure.units.median} / ${figure.units.p99} (median / p99 of ${figure.samples}; ${figure.operations.join(', ')}); status ${figure.statuses.join(', ')}`;
out.push(`New claim by PUT: ${pathLine(newByPut)}`);
out.push(`Release (DELETE of a claim): ${pathLine(release)}`);
out.push(
  `Raw conditional puts/s (the allocation object a claim puts, counted as claims are, around the scenarios compared): 1 client ${raw1.requestsPerSecond} (${raw1.before.requestsPerSecond} before, ${raw1.after.requestsPerSecond} after), ` +
    `${CONCURRENT_CLIENTS} clients ${raw32.requestsPerSecond} (${raw32.before.requestsPerSecond} before, ${raw32.after.requestsPerSecond} after); ` +
    `unmetered, at the end: ${plain1.requestsPerSecond} / ${plain32.requestsPerSecond}, tiny items {pk, sk, t} ${tiny1.requestsPerSecond} / ${tiny32.requestsPerSecond}`,
);
out.push(
  `Efficiency (${CONCURRENT_CLIENTS} clients): ${concurrent.claimsPerSecond} claims/s × ${concurrent.itemOperationsPerClaim.median} item operations (${concurrent.requestsPerClaim.median} requests) ÷ ${raw32.requestsPerSecond} = ${round(efficiency, 3)}; ` +
    `one client (${oneClient.name}): ${oneClient.claimsPerSecond} × ${oneClient.itemOperationsPerClaim.median} ÷ ${raw1.requestsPerSecond} = ${round(efficiencyOneClient, 3)}`,
);
const timeLine = (scenario: ScenarioResult, raw: { before: RawResult; after: RawResult }) => {
  const time = scenario.time;
  const calls = Object.entries(time.requestMs)
    .map(([operation, ms]) => `${operation} ${ms}`)
    .join(', ');
  return (
    `${scenario.name}: ${time.claimMs} ms = ${time.inRequestsMs} ms in ${scenario.requestsPerClaim.mean} SDK calls (ms per call: ${calls}) + ${time.outsideRequestsMs} ms the handler's own; ` +
    `a raw put took ${raw.before.msPerPut} ms before, ${raw.after.msPerPut} ms after`
  );
};
out.push(`Where a claim's time goes (means): ${timeLine(oneClient, raw1)}; ${timeLine(concurrent, raw32)}`);
out.push(
  `Stream refresh alongside the ${CONCURRENT_CLIENTS}-client run: ${concurrent.stream.refreshes} refreshes, busy ${round((concurrent.stream.busyShare ?? 0) * 100, 1)}% of the run, ${concurrent.stream.requestsPerClaim} requests and ${concurrent.stream.capacityPerClaim} capacity units per claim`,
);
out.push(
  '(stream req/claim: requests of the stream refresh per claim; it reads and writes only the blocks its claims touched)',
);
if (concurrent.tail) {
  const tail = concurrent.tail;
  out.push(
    `Tail of the ${CONCURRENT_CLIENTS}-client run (claims at or above the p99 of capacity): ${tail.claims} claims, ` +
      `${tail.conditionalFailures} lost puts each, operations ${JSON.stringify(tail.operations)}, ` +
      `${tail.inFirstSecond} of them sent in the run's first second`,
  );
}
const concentrationLines = (of: readonly SpaceConcentration[]) => {
  for (const space of of) {
    out.push(
      `  ${space.space.padEnd(12)} ${space.writes} writes (${space.writesPerClaim}/claim), ${space.windows} windows, ${space.windowsIgnored} ignored (< ${MIN_WINDOW_WRITES} writes)` +
        (space.busiestShare === null
          ? ', no window with enough writes'
          : `; max share ${space.busiestShare} (${space.busiestKey}, second ${space.busiestWindow?.second}: ${space.busiestWindow?.busiestKeyWrites} of ${space.busiestWindow?.writes}); ceiling ${space.ceilingClaimsPerSecond} claims/s`) +
        (space.busiestShareSucceededOnly !== null && space.busiestShareSucceededOnly !== space.busiestShare
          ? `; successful writes only: ${space.busiestShareSucceededOnly}`
          : '') +
        (space.wholeRunShare !== null
          ? `; over the whole run the busiest key took ${space.wholeRunShare}`
          : '') +
        (space.unattributed > 0 ? `; ${space.unattributed} writes with no key in the request` : ''),
    );
  }
};
out.push(`Write concentration (${concurrent.name}), busiest partition-key value per 1-s window:`);
concentrationLines(spaces);
out.push(
  `  busiest key share ${busiestKeyShare}, per-pool ceiling ${perPoolCeiling} claims/s (${PARTITION_WRITES_PER_SECOND} writes/s ÷ (share × writes per claim), lowest key space)`,
);
out.push('Bundles:');
for (const bundle of bundles) {
  out.push(
    `  ${bundle.name.padEnd(8)} ${(bundle.bytes / 1000).toFixed(1).padStart(7)} KB   cold load median ${bundle.coldLoadMs} ms (as deployed, --enable-source-maps; without: ${bundle.coldLoadWithoutSourceMapsMs} ms)`,
  );
}
out.push('');
out.push('Targets:');
const missedScenarioChecks = [...perScenario.values()].flat().filter((item) => !item.met);
const scenarioCount = [...perScenario.values()].flat().length;
out.push(
  `  scenarios 1 and 2: ${scenarioCount - missedScenarioChecks.length} of ${scenarioCount} checks met${missedScenarioChecks.length ? '; missed:' : ''}`,
);
for (const item of missedScenarioChecks) out.push(`    ${describeCheck(item)}`);
for (const item of overall) out.push(`  ${describeCheck(item)}`);
const runTime = check('total run time, s (2 cores)', elapsed(), '≤', 300);
out.push(`  ${describeCheck(runTime)}`);
out.push('');
out.push('Notes:');
for (const note of notes) out.push(`  - ${note}`);
out.push('');
out.push(`Written: ${resultsFile}`);
out.push(
  `Total run time: ${elapsed().toFixed(1)} s (store scenarios ${storeSeconds.toFixed(1)} s, of which fills ${fillSeconds.toFixed(1)} s; cdk synth ${synthSeconds} s)`,
);
console.log(out.join('\n'));
