/**
 * The benchmark rows of issue 15 (part of `npm run bench`, after bench/run.ts; alone:
 * `npx tsx bench/prefix-lengths.ts [fill|concurrent]`): claims on an IPPrefixPool of a range of lengths
 * (a /8 of /16../28), through the real claim handler against the embedded dynalite, every DynamoDB request counted per claim by the same
 * middleware as bench/run.ts.
 *
 * - A /24 claim at 0 / 50 / 99 % fill: the pool is filled by real claims of mixed lengths (/16, /20, /24,
 *   /28), the stream function's pool refresh (`refreshPool`) is run with their changes, then one client
 *   claims /24s.
 * - 32 concurrent clients claiming random lengths /20../28 in a fresh /8, the pool refresh running
 *   every 50 claims alongside them: requests per claim, failed conditional writes per claim, and the
 *   overlaps among the prefixes handed out (brute force; must be 0).
 *
 * Writes bench/prefix-results.json.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { refreshPool } from '../lib/service/stream/reconcile.ts';
import type { SlotChange } from '../lib/service/counts/tally.ts';
import { memberId } from '../lib/service/counts/runs.ts';
import { startInstance, type Instance } from './instance.ts';
import { distribution, round, roundTrips, totals } from './measure.ts';
import { benchTable, startStoreThread } from './store.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const MIN = 16;
const MAX = 28;
const CLAIMS = 40;
const CLIENTS = 32;
const CLAIMS_PER_CLIENT = 20;
const REFRESH_EVERY = 50;

const store = await startStoreThread();
const tableName = await benchTable(store, 'allot-bench-prefixes');
const admin = startInstance(store.endpoint, tableName, 'api');
const stream = startInstance(store.endpoint, tableName, 'stream');
let changeIds = 0;

function range(prefix: string): [number, number] {
  const [address, length] = prefix.split('/');
  const n = address!.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
  return [n, n + 2 ** (32 - Number(length)) - 1];
}

/** The stream record a claim's allocation makes, as the pool refresh takes it. */
function changeOf(prefix: string): SlotChange {
  const [first] = range(prefix);
  const length = Number(prefix.split('/')[1]);
  const shift = MAX - length;
  const slot = BigInt(first) >> BigInt(32 - MAX);
  return {
    record: `bench-${++changeIds}`,
    family: 4,
    slot,
    present: true,
    run: { member: memberId(slot, shift), first: slot, span: 1n << BigInt(shift) },
  };
}

class Pool {
  readonly changes: SlotChange[] = [];
  constructor(readonly name: string) {}
  get id() {
    return { namespace: 'bench', kind: 'IPPrefixPool' as const, name: this.name };
  }
  async create(): Promise<void> {
    const answer = await admin.call('POST', 'ipprefixpools', {
      metadata: { name: this.name },
      spec: { prefixes: ['10.0.0.0/8'], allocationPrefixLengths: { min: MIN, max: MAX, default: 24 } },
    });
    if (answer.status !== 201) throw new Error(JSON.stringify(answer.body));
    await refreshPool(stream.context, this.id, [], { recount: true });
  }
  async refresh(): Promise<void> {
    const batch = this.changes.splice(0);
    for (let start = 0; start < batch.length; start += 100)
      await refreshPool(stream.context, this.id, batch.slice(start, start + 100));
  }
  async claim(instance: Instance, name: string, prefixLength: number) {
    const mark = instance.meter.mark();
    const answer = await instance.call('POST', 'claims', {
      metadata: { name },
      spec: { poolRef: { kind: 'IPPrefixPool', name: this.name }, prefixLength },
    });
    const records = instance.meter.since(mark);
    const sum = totals(records);
    const value = answer.body?.status?.value as string | undefined;
    if (value) this.changes.push(changeOf(value));
    return { value, ...sum, roundTrips: roundTrips(records) };
  }
}

function overlapsAmong(values: readonly string[]): number {
  const sorted = values.map(range).sort((a, b) => a[0] - b[0]);
  let overlaps = 0;
  let end = -1;
  for (const [first, last] of sorted) {
    if (first <= end) overlaps++;
    end = Math.max(end, last);
  }
  return overlaps;
}

/** Fills by real claims of mixed lengths: how many of each length. */
const FILLS: { fill: number; plan: [length: number, count: number][] }[] = [
  { fill: 0, plan: [] },
  {
    fill: 0.5,
    plan: [
      [16, 120],
      [20, 120],
      [24, 120],
      [28, 64],
    ],
  },
  {
    fill: 0.99,
    plan: [
      [16, 253],
      [20, 6],
      [24, 16],
      [28, 16],
    ],
  },
];

const rows: Record<string, unknown>[] = [];
// `npx tsx bench/prefix-lengths.ts fill` or `… concurrent` runs one part only.
const only = ['fill', 'concurrent'].includes(process.argv[2] ?? '') ? process.argv[2] : undefined;
const filler = startInstance(store.endpoint, tableName, 'claim');
for (const { fill, plan } of only === 'concurrent' ? [] : FILLS) {
  const pool = new Pool(`fill-${Math.round(fill * 100)}`);
  await pool.create();
  const held: string[] = [];
  let n = 0;
  for (const [length, count] of plan)
    for (let i = 0; i < count; i++) {
      const { value } = await pool.claim(filler, `${pool.name}-f${n++}`, length);
      if (!value) throw new Error(`the fill of ${pool.name} ran out at /${length}`);
      held.push(value);
      if (pool.changes.length >= REFRESH_EVERY) await pool.refresh();
    }
  await pool.refresh();
  // The counts the stream function writes for the whole fill (bench/run.ts writes them for its fills).
  await refreshPool(stream.context, pool.id, [], { recount: true });
  const used = held.reduce((sum, value) => sum + 2 ** (32 - Number(value.split('/')[1])), 0) / 2 ** 24;
  const instance = startInstance(store.endpoint, tableName, 'claim');
  const samples = [];
  for (let i = 0; i < CLAIMS; i++) {
    samples.push(await pool.claim(instance, `${pool.name}-m${i}`, 24));
    if (pool.changes.length >= REFRESH_EVERY) await pool.refresh();
  }
  instance.destroy();
  const values = [...held, ...samples.flatMap((s) => (s.value ? [s.value] : []))];
  rows.push({
    scenario: `a /24 in a /8 of /16../28, ${Math.round(fill * 100)} % full (mixed lengths), 1 client`,
    fill: round(used, 4),
    claims: CLAIMS,
    allocated: samples.filter((s) => s.value).length,
    requests: distribution(samples.map((s) => s.requests)),
    roundTrips: distribution(samples.map((s) => s.roundTrips)),
    units: distribution(samples.map((s) => s.units)),
    conditionalFailuresPerClaim: round(samples.reduce((sum, s) => sum + s.conditionalFailures, 0) / CLAIMS),
    overlaps: overlapsAmong(values),
  });
  console.error(JSON.stringify(rows[rows.length - 1]));
}
filler.destroy();

if (only !== 'fill') {
  const pool = new Pool('concurrent');
  await pool.create();
  const instances = Array.from({ length: CLIENTS }, () => startInstance(store.endpoint, tableName, 'claim'));
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let refreshing = Promise.resolve();
  const samples = (
    await Promise.all(
      instances.map(async (instance, client) => {
        const mine = [];
        for (let i = 0; i < CLAIMS_PER_CLIENT; i++) {
          const length = 20 + Math.floor(random() * 9);
          mine.push(await pool.claim(instance, `c${client}-${i}`, length));
          if (pool.changes.length >= REFRESH_EVERY) refreshing = refreshing.then(() => pool.refresh());
        }
        return mine;
      }),
    )
  ).flat();
  await refreshing;
  await pool.refresh();
  for (const instance of instances) instance.destroy();
  const values = samples.flatMap((s) => (s.value ? [s.value] : []));
  rows.push({
    scenario: `${CLIENTS} concurrent clients, random lengths /20../28 in a /8 of /16../28`,
    claims: samples.length,
    allocated: values.length,
    requests: distribution(samples.map((s) => s.requests)),
    roundTrips: distribution(samples.map((s) => s.roundTrips)),
    units: distribution(samples.map((s) => s.units)),
    conditionalFailuresPerClaim: round(
      samples.reduce((sum, s) => sum + s.conditionalFailures, 0) / samples.length,
    ),
    overlaps: overlapsAmong(values),
  });
  console.error(JSON.stringify(rows[rows.length - 1]));
}

admin.destroy();
stream.destroy();
await store.close();
writeFileSync(
  fileURLToPath(new URL('prefix-results.json', import.meta.url)),
  `${JSON.stringify({ generatedAt: new Date().toISOString(), rows }, null, 2)}\n`,
);
