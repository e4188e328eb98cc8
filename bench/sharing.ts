/**
 * A claim from a pool shared with another namespace, with a quota (api.md, "Pools shared with other
 * namespaces"; part of `npm run bench`; alone: `npx tsx bench/sharing.ts`). An operator's IndexPools of
 * 2^16 values in `infra`, `spec.sharedWith: [{ namespace: 'acme', maxAllocations }]`, claimed by PUT
 * from `acme` with `spec.poolRef.namespace: 'infra'`; every DynamoDB request counted by the claim-path
 * machinery (bench/claim-path.ts, bench/measure.ts), each function on its own client.
 *
 * - One client: a claim's whole life, as bench/stream.ts measures it, in a shared pool and, in the same
 *   run, in an unshared pool of `acme` (the baseline): 200 new claims (PUT) one after another, the stream
 *   function's work on their records (one shard, bench/stream-feed.ts), 200 releases (DELETE) by the
 *   release function, the stream's work on theirs (the Recycle reclaim, the place given back, waiting
 *   claims woken). The claims' and releases' paths per claim (median / p99), and the quota's share of the
 *   whole life: the requests on the quota's holders item (`Q#…`), and the shared life less the unshared.
 * - 32 clients racing for the last places of a quota: maxAllocations 32 with 24 held, 32 instances of the
 *   claim function (each warmed by a claim of its own in the pool, released before the race, as a Lambda
 *   instance that has served the pool before) each PUT a new claim at once. How many got a value, how
 *   many wait `QuotaExceeded`, and the claims over the quota counted from the store: the pool's
 *   allocation objects held by `acme`'s claims (its list, `?pool=`) less the limit, before and after the
 *   stream has handled the race's records. A few rounds, each on a pool of its own.
 *
 * Writes bench/sharing-results.json.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { createStreamHandler } from '../functions/stream.ts';
import { localClient } from '../lib/local/store/dynalite.ts';
import { holdersKey } from '../lib/store/keys.ts';
import { Table } from '../lib/store/table.ts';
import { measured, pathFigure, type PathFigure, type PathSample } from './claim-path.ts';
import { startInstance, type Instance } from './instance.ts';
import { byOperation, itemBytes, Meter, round, totals, unitsOf, type RequestRecord } from './measure.ts';
import { ShardFeed } from './stream-feed.ts';
import { benchTable, startStoreThread } from './store.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const OPERATOR = 'infra';
const TENANT = 'acme';
const LIFE_CLAIMS = 200;
/** The one-client pool's quota: never reached (the API allows up to 4,000). */
const LIFE_QUOTA = 4000;
const RACE_QUOTA = 32;
const RACE_HELD = 24;
const RACE_CLIENTS = 32;
const RACE_ROUNDS = Number(process.env.BENCH_SHARING_ROUNDS ?? 4);
const POOL_SPEC = { ranges: ['0..65535'], reclaimPolicy: 'Recycle' };
const resultsFile = fileURLToPath(new URL('sharing-results.json', import.meta.url));

/** The deployed mapping's concurrent batches per shard, as bench/stream.ts takes it. */
const parallelization = await import('../lib/cloud/stream-mapping.ts' as string).then(
  (module: { STREAM_MAPPING: { parallelizationFactor: number } }) =>
    module.STREAM_MAPPING.parallelizationFactor,
  () => 1,
);

const store = await startStoreThread({ changes: true });
const tableName = await benchTable(store, 'allot-bench-sharing');
const feed = new ShardFeed(store, tableName, parallelization);
const operator = startInstance(store.endpoint, tableName, 'api', OPERATOR);
const tenant = startInstance(store.endpoint, tableName, 'api', TENANT);
const streamClient = localClient(store.endpoint);
const streamMeter = new Meter().attach(streamClient);
const stream = createStreamHandler({ table: new Table({ tableName, client: streamClient }) });
const instances: Instance[] = [operator, tenant];
const started = Date.now();
const progress = (message: string) =>
  console.error(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}`);

function instance(functionName: string): Instance {
  const created = startInstance(store.endpoint, tableName, functionName, TENANT);
  instances.push(created);
  return created;
}

async function createPool(admin: Instance, name: string, sharedWith?: unknown[]) {
  const spec = sharedWith ? { ...POOL_SPEC, sharedWith } : POOL_SPEC;
  const answer = await admin.call('PUT', `indexpools/${name}`, { metadata: { name }, spec });
  if (answer.status >= 300) throw new Error(`pool ${name}: ${JSON.stringify(answer.body)}`);
  await feed.deliver(stream);
}

const claimOf = (name: string, pool: { name: string; namespace?: string }) => ({
  metadata: { name },
  spec: { poolRef: { kind: 'IndexPool', ...pool } },
});

const reasonOf = (body: any): string | undefined =>
  (body?.status?.conditions as { type: string; reason: string }[] | undefined)?.find(
    (condition) => condition.type === 'Allocated',
  )?.reason;

const putClaim = (claimer: Instance, name: string, pool: { name: string; namespace?: string }) =>
  measured(claimer, name, () => claimer.call('PUT', `claims/${name}`, claimOf(name, pool)));

/** The requests on a quota's holders item (store/quotas.ts, keys.ts `holdersKey`). */
const onHolders = (record: RequestRecord) =>
  [...record.writes.map((write) => write.key), ...record.reads].some((key) => key?.startsWith('Q#'));

interface Share {
  requests: number;
  units: number;
  /** Of those, the requests and units on the quota's holders item. */
  quotaRequests: number;
  quotaUnits: number;
  operations: Record<string, { requests: number; units: number }>;
}

function share(records: readonly RequestRecord[], claims: number): Share {
  const sum = totals(records);
  const quota = records.filter(onHolders);
  return {
    requests: round(sum.requests / claims, 2),
    units: round(sum.units / claims, 2),
    quotaRequests: round(quota.length / claims, 2),
    quotaUnits: round(quota.reduce((total, record) => total + unitsOf(record), 0) / claims, 2),
    operations: Object.fromEntries(
      Object.entries(byOperation(records)).map(([operation, { requests, units }]) => [
        operation,
        { requests: round(requests / claims, 2), units: round(units / claims, 2) },
      ]),
    ),
  };
}

// ------------------------------------------------------------------ one client: a claim's whole life

/**
 * The quota's item once the life's claims hold their values, and what its conditional write cost as it
 * grew: a write is billed by the larger of the item before and after, 1 unit a KB, so the quota's write
 * costs more the more the namespace holds.
 */
async function holdersItem(pool: string, records: readonly RequestRecord[]) {
  const key = holdersKey({ namespace: OPERATOR, kind: 'IndexPool', name: pool }, TENANT);
  const item = await operator.table.get<Record<string, unknown>>(key);
  const holders = item?.holders instanceof Set ? [...(item.holders as Set<string>)] : [];
  const bytes = item ? itemBytes(item) : 0;
  const takes = records.filter(onHolders).map(unitsOf);
  const perHolder = holders.length === 0 ? 0 : bytes / holders.length;
  const longest = 63;
  const tokenBytes =
    holders.length === 0 ? 0 : holders.reduce((sum, h) => sum + h.length, 0) / holders.length;
  return {
    count: holders.length,
    bytes,
    averageTokenBytes: round(tokenBytes, 1),
    /** The units of the quota's write at the first claim, after each 50, and at the last. */
    takeUnits: Object.fromEntries(
      [0, 49, 99, 149, takes.length - 1].map((i) => [String(i), takes[i] ?? NaN]),
    ),
    /** Its write at the most a namespace may hold (4,000), by this run's bytes a holder, and with names of 63 characters. */
    unitsAtMostHolders: Math.ceil((4000 * perHolder) / 1024),
    unitsAtMostHoldersLongNames: Math.ceil((4000 * (perHolder - tokenBytes + 14 + longest)) / 1024),
  };
}

async function wholeLife(label: string, pool: { name: string; namespace?: string }) {
  const claimer = instance('claim');
  const releaser = instance('release');
  const names = Array.from({ length: LIFE_CLAIMS }, (_, i) => `${label}-${i}`);
  let streamMark = streamMeter.mark();
  let mark = claimer.meter.mark();
  const claims: PathSample[] = [];
  for (const name of names) claims.push(await putClaim(claimer, name, pool));
  const claimRecords = claimer.meter.since(mark);
  const claimHandler = share(claimRecords, LIFE_CLAIMS);
  const holders = pool.namespace === undefined ? undefined : await holdersItem(pool.name, claimRecords);
  await feed.deliver(stream);
  const streamOnClaim = share(streamMeter.since(streamMark), LIFE_CLAIMS);

  streamMark = streamMeter.mark();
  mark = releaser.meter.mark();
  const releases: PathSample[] = [];
  for (const name of names)
    releases.push(await measured(releaser, name, () => releaser.call('DELETE', `claims/${name}`)));
  const releaseHandler = share(releaser.meter.since(mark), LIFE_CLAIMS);
  await feed.deliver(stream);
  const streamOnRelease = share(streamMeter.since(streamMark), LIFE_CLAIMS);

  const parts = [claimHandler, streamOnClaim, releaseHandler, streamOnRelease];
  const sum = (field: keyof Share) =>
    round(
      parts.reduce((total, part) => total + (part[field] as number), 0),
      2,
    );
  return {
    allocated: claims.filter((sample) => sample.value !== undefined).length,
    holders,
    claim: pathFigure(claims),
    release: pathFigure(releases),
    claimHandler,
    streamOnClaim,
    releaseHandler,
    streamOnRelease,
    total: {
      requests: sum('requests'),
      units: sum('units'),
      quotaRequests: sum('quotaRequests'),
      quotaUnits: sum('quotaUnits'),
    },
  };
}

// ------------------------------------------------------------------ 32 clients racing for a quota's last places

/** The pool's allocation objects held by claims of `namespace`, from its list in the pool's namespace. */
async function heldBy(pool: string, namespace: string): Promise<number> {
  let held = 0;
  let token: string | undefined;
  do {
    const query = `pool=${pool}&limit=1000${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
    const answer = await operator.call('GET', `indices?${query}`);
    if (answer.status !== 200) throw new Error(`list of ${pool}: ${JSON.stringify(answer.body)}`);
    for (const item of answer.body.items as { spec: { claimRef?: { namespace?: string } } }[])
      if (item.spec.claimRef?.namespace === namespace) held++;
    token = answer.body.metadata?.continue || undefined;
  } while (token);
  return held;
}

async function raceRound(round: number, clients: Instance[]) {
  const pool = { name: `race-${round}`, namespace: OPERATOR };
  await createPool(operator, pool.name, [{ namespace: TENANT, maxAllocations: RACE_QUOTA }]);
  // Each instance serves the pool once before the race (its claim released, its place given back).
  const warm = clients.map((_, i) => `warm-${round}-${i}`);
  for (const [i, claimer] of clients.entries()) {
    const answer = await claimer.call('PUT', `claims/${warm[i]}`, claimOf(warm[i]!, pool));
    if (answer.body?.status?.value === undefined) throw new Error(`warm-up: ${JSON.stringify(answer.body)}`);
  }
  for (const name of warm) await tenant.call('DELETE', `claims/${name}`);
  await feed.deliver(stream);
  for (let i = 0; i < RACE_HELD; i++) {
    const answer = await tenant.call('PUT', `claims/held-${round}-${i}`, claimOf(`held-${round}-${i}`, pool));
    if (answer.body?.status?.value === undefined) throw new Error(`held: ${JSON.stringify(answer.body)}`);
  }
  await feed.deliver(stream);
  const before = await heldBy(pool.name, TENANT);

  const marks = clients.map((claimer) => claimer.meter.mark());
  const samples = await Promise.all(
    clients.map((claimer, i) => putClaim(claimer, `race-${round}-${i}`, pool)),
  );
  const records = clients.flatMap((claimer, i) => claimer.meter.since(marks[i]!));
  const answeredHeld = await heldBy(pool.name, TENANT);
  await feed.deliver(stream);
  const settledHeld = await heldBy(pool.name, TENANT);
  const reasons: Record<string, number> = {};
  for (const sample of samples) {
    const answer = await tenant.call('GET', `claims/${sample.name}`);
    const reason = reasonOf(answer.body) ?? `status ${answer.status}`;
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  return {
    pool: pool.name,
    heldBefore: before,
    gotValue: samples.filter((sample) => sample.value !== undefined).length,
    answeredQuotaExceeded: samples.filter((sample) => sample.value === undefined).length,
    /** Each racing claim's condition after the stream handled the race's records. */
    reasonsAfterStream: reasons,
    heldWhenAnswered: answeredHeld,
    heldAfterStream: settledHeld,
    overQuota: Math.max(0, answeredHeld - RACE_QUOTA, settledHeld - RACE_QUOTA),
    conditionalFailures: totals(records).conditionalFailures,
    quotaRefusals: records.filter((record) => record.conditionalFailure && onHolders(record)).length,
    samples,
  };
}

// ------------------------------------------------------------------ the run

const committed = JSON.parse(readFileSync(new URL('./results.json', import.meta.url), 'utf8')) as {
  newClaimByPut: PathFigure;
  release: PathFigure;
};
const median = (figure: PathFigure) => ({
  requests: figure.requests.median,
  roundTrips: figure.roundTrips.median,
  units: figure.units.median,
});

try {
  await createPool(tenant, 'own');
  await createPool(operator, 'shared', [{ namespace: TENANT, maxAllocations: LIFE_QUOTA }]);
  await feed.discard();
  progress('pools made');
  const unshared = await wholeLife('own', { name: 'own' });
  progress(
    `unshared life: claim ${JSON.stringify(median(unshared.claim))}, total ${unshared.total.requests}`,
  );
  const shared = await wholeLife('tenant', { name: 'shared', namespace: OPERATOR });
  progress(`shared life: claim ${JSON.stringify(median(shared.claim))}, total ${shared.total.requests}`);

  const clients = Array.from({ length: RACE_CLIENTS }, () => instance('claim'));
  const rounds = [];
  for (let i = 0; i < RACE_ROUNDS; i++) {
    const raced = await raceRound(i, clients);
    rounds.push(raced);
    progress(
      `race ${i}: ${raced.gotValue} got a value, ${raced.answeredQuotaExceeded} wait, ` +
        `held ${raced.heldWhenAnswered} / ${raced.heldAfterStream}`,
    );
  }
  const raceSamples = rounds.flatMap((raced) => raced.samples);
  const race = {
    quota: RACE_QUOTA,
    heldBefore: RACE_HELD,
    clients: RACE_CLIENTS,
    rounds: rounds.map(({ samples, ...rest }) => ({
      ...rest,
      statuses: [...new Set(samples.map((sample) => sample.status))],
    })),
    all: pathFigure(raceSamples),
    gotValue: pathFigure(raceSamples.filter((sample) => sample.value !== undefined)),
    quotaExceeded: pathFigure(raceSamples.filter((sample) => sample.value === undefined)),
    /** Failed conditional writes per racing claim: all, and the quota's (a place refused). */
    conditionalFailuresPerClaim: round(
      rounds.reduce((sum, raced) => sum + raced.conditionalFailures, 0) / raceSamples.length,
      3,
    ),
    quotaRefusalsPerClaim: round(
      rounds.reduce((sum, raced) => sum + raced.quotaRefusals, 0) / raceSamples.length,
      3,
    ),
    overQuota: Math.max(...rounds.map((raced) => raced.overQuota)),
  };

  const quotaShare = {
    /** Requests and units on the holders item ÷ the whole life's. */
    holders: {
      requests: shared.total.quotaRequests,
      units: shared.total.quotaUnits,
      ofRequests: round(shared.total.quotaRequests / shared.total.requests, 3),
      ofUnits: round(shared.total.quotaUnits / shared.total.units, 3),
    },
    /** The shared life less the unshared (the holders item and anything else sharing adds). */
    added: {
      requests: round(shared.total.requests - unshared.total.requests, 2),
      units: round(shared.total.units - unshared.total.units, 2),
      ofRequests: round((shared.total.requests - unshared.total.requests) / shared.total.requests, 3),
      ofUnits: round((shared.total.units - unshared.total.units) / shared.total.units, 3),
    },
  };
  const targets = {
    medianRequests: shared.claim.requests.median <= 6 && race.all.requests.median <= 6,
    medianRoundTrips: shared.claim.roundTrips.median <= 4 && race.all.roundTrips.median <= 4,
    noneOverQuota: race.overQuota === 0,
    unsharedUnchanged:
      JSON.stringify(median(unshared.claim)) === JSON.stringify(median(committed.newClaimByPut)),
  };
  const result = {
    when: new Date().toISOString(),
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
    libChanged: execFileSync('git', ['status', '--porcelain', 'lib'], { encoding: 'utf8' }).trim() !== '',
    machine: `${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
    pool: `index 2^16 in ${OPERATOR}, Recycle, claimed from ${TENANT}`,
    lifeClaims: LIFE_CLAIMS,
    lifeQuota: LIFE_QUOTA,
    committedUnshared: { claim: committed.newClaimByPut, release: committed.release },
    unshared,
    shared,
    quotaShare,
    race,
    targets,
  };
  // Formatted as the repository's prettier formats JSON, so `npm run lint` stays clean after a run.
  const formatted = await prettier.format(JSON.stringify(result, null, 2), {
    ...(await prettier.resolveConfig(resultsFile)),
    parser: 'json',
  });
  writeFileSync(resultsFile, formatted);
  console.error(
    `a shared pool's claim: ${JSON.stringify(median(shared.claim))} (unshared ${JSON.stringify(median(unshared.claim))}); ` +
      `race: ${JSON.stringify(median(race.all))}, over the quota ${race.overQuota}; ` +
      `the quota's share of a life ${quotaShare.holders.ofRequests} (added ${quotaShare.added.ofRequests}); ` +
      `targets ${JSON.stringify(targets)}`,
  );
} finally {
  feed.close();
  streamClient.destroy();
  for (const created of instances) created.destroy();
  await store.close();
}
