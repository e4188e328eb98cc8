/**
 * The stream rows of docs/benchmark.md's generated section (bench/readme.ts), from bench/stream-results.json
 * (bench/stream.ts) and, beside each figure, the same bench run before the stream function worked on
 * batches as a whole (bench/stream-results-before.json, at the commit it names).
 */
import { existsSync, readFileSync } from 'node:fs';

interface Share {
  requests: number;
  units: number;
}
interface Life {
  pool: string;
  kind: string;
  claimHandler: Share;
  streamOnClaim: Share;
  releaseHandler: Share;
  streamOnRelease: Share;
  total: Share;
  stream: Share;
  countsExact: boolean;
}
interface Throughput {
  latencyMs: number;
  parallelization: number;
  recordsPerSecond: number;
  livesPerSecond: number;
  countsExact: boolean;
}
interface Sustained {
  clients: number;
  seconds: number;
  latencyMs: number;
  parallelization: number;
  operationsPerSecond: number;
  handlersRecordsPerSecond: number;
  handledShareAtLoadEnd: number;
  streamRecordsPerBusySecond: number;
  rateRatio: number;
  capacityRatio?: number;
  lagSeconds: number;
  streamThread?: string;
  mainThreadBusy?: number;
  streamRecordsPerLaneBusySecond?: number;
  recordsPerBatch?: number;
}
interface Lone {
  /** Batches gathered for this long (absent: each record its own batch). */
  windowMs?: number;
  claims: number;
  perClaim: Share;
  perRelease: Share;
  batchesPerClaim: number;
  batchesPerRelease: number;
}
interface StreamResults {
  commit: string;
  parallelizationFactor: number;
  loadAverage?: { start: number; end: number };
  wholeLife?: Life[];
  throughput?: Throughput[];
  sustained?: Sustained;
  sustainedSharedThread?: Sustained;
  lone?: Lone;
  loneGathered?: Lone;
}

const read = (name: string): StreamResults | undefined => {
  const url = new URL(`./${name}`, import.meta.url);
  return existsSync(url) ? (JSON.parse(readFileSync(url, 'utf8')) as StreamResults) : undefined;
};

const mark = (met: boolean) => (met ? '✓' : '✗');
const pair = (share: Share) => `${share.requests} / ${share.units}`;

/** The stream's rows as Markdown lines (none when the stream benchmark has not run). */
export function streamSection(table: (header: string[], body: string[][]) => string): string[] {
  const after = read('stream-results.json');
  if (!after) return [];
  const before = read('stream-results-before.json');
  const was = (text: string) => (before ? ` (was ${text})` : '');
  const lines: string[] = [];

  const lives = after.wholeLife ?? [];
  if (lives.length > 0) {
    const rows = lives.map((life, i) => {
      const old = before?.wholeLife?.[i];
      const fixed = life.kind === 'IndexPool' || life.kind === 'IPAddressPool';
      const ranged = life.pool.startsWith('range');
      const target = fixed
        ? `≤ 8 / ≤ 7 ${mark(life.total.requests <= 8)} ${mark(life.total.units <= 7)}`
        : ranged && old
          ? `no worse than before ${mark(life.total.requests <= old.total.requests && life.total.units <= old.total.units)}`
          : '—';
      return [
        life.pool,
        pair(life.claimHandler),
        pair(life.streamOnClaim),
        pair(life.releaseHandler),
        pair(life.streamOnRelease),
        `${pair(life.total)}${old ? was(pair(old.total)) : ''}`,
        `${pair(life.stream)}${old ? was(pair(old.stream)) : ''}`,
        `${target}${life.countsExact ? '' : ' (counts not exact after!)'}`,
      ];
    });
    lines.push(
      `A claim's whole life (bench/stream.ts): 200 claims (PUT) by one client, then 200 releases (DELETE), each function's requests / capacity units per claim, counted on its own client; each phase's records reach the stream function as one shard's event source mapping batches them (up to 100, ${after.parallelizationFactor} batches at once). The claim path is another issue's; the stream's share is this one's:`,
      '',
      table(
        [
          'pool',
          'claim handler',
          'stream, on the claim',
          'release handler',
          'stream, on the release',
          'whole life',
          "the stream's share",
          'target (whole life)',
        ],
        rows,
      ),
      '',
    );
  }

  const speeds = after.throughput ?? [];
  if (speeds.length > 0) {
    const old = (latency: number) => before?.throughput?.find((row) => row.latencyMs === latency);
    const rows = speeds.map((row) => {
      const then = old(row.latencyMs);
      return [
        `${row.latencyMs} ms a DynamoDB call, ${row.parallelization} batch${row.parallelization === 1 ? '' : 'es'} at once`,
        `${row.recordsPerSecond}${then ? was(String(then.recordsPerSecond)) : ''}`,
        `${row.livesPerSecond}${then ? was(String(then.livesPerSecond)) : ''}`,
        row.latencyMs === 5 ? `≥ 1,000 records/s ${mark(row.recordsPerSecond >= 1000)}` : '—',
      ];
    });
    lines.push(
      "The stream's throughput on one shard: 300 claims' records, then their releases' (and the stream's own), handed over at once, timed from the first batch to the last answer; latency added to every call of the stream function's client by an SDK middleware (before: one record at a time, one batch at a time):",
      '',
      table(['setting', 'records/s', 'claim lives/s', 'target'], rows),
      '',
    );
  }

  const burst = speeds.find(
    (row) => row.latencyMs === 5 && row.parallelization === after.parallelizationFactor,
  );
  const loads = [after.sustained, after.sustainedSharedThread].filter((load): load is Sustained => !!load);
  if (loads.length > 0) {
    const rows = loads.map((load) => {
      const ofBurst = burst ? load.streamRecordsPerBusySecond / burst.recordsPerSecond : undefined;
      return [
        `${load.clients} clients, ${load.seconds} s, ${load.latencyMs} ms a call; the stream on ${load.streamThread ?? 'the clients’'} thread${load.mainThreadBusy === undefined ? '' : ` (clients’ thread ${Math.round(load.mainThreadBusy * 100)} % busy)`}`,
        `${load.operationsPerSecond}`,
        `${load.handlersRecordsPerSecond}`,
        `${load.streamRecordsPerBusySecond}; ${load.streamRecordsPerLaneBusySecond ?? '—'}; ${load.recordsPerBatch ?? '—'}`,
        ofBurst === undefined ? '—' : `${ofBurst.toFixed(2)} ${mark(ofBurst >= 0.8)}`,
        `${load.capacityRatio ?? '—'} ${mark((load.capacityRatio ?? 0) >= 1)}`,
        `${load.rateRatio}`,
        `${load.lagSeconds} s ${mark(load.lagSeconds <= 2)}`,
      ];
    });
    lines.push(
      `Sustained load on the local stream of \`npm start\` (lib/local/stream/emulation.ts, ${after.parallelizationFactor} batches at once): clients claiming and releasing in turn, each its own instance and client, latency added to every call of every client. The stream function on a thread of its own, as a Lambda function has its own CPU, and on the clients' thread, as this bench ran it before (docs/stream.md, "What a batch waits for"). Records per busy second: handled ÷ the seconds any batch was in flight; per lane-busy second × lanes: handled ÷ the batches' own seconds summed, times the lanes (what the shard handles with its lanes busy together, as in the burst); ÷ the burst: the first against the one-shard burst rate above at the same latency and lanes (target ≥ 0.8). The stream's rate ÷ the handlers': records per busy second ÷ the records the handlers' writes put on the stream per second (target ≥ 1); beside it, from a third into the load to its end, handled ÷ written in that window (at most 1):`,
      '',
      table(
        [
          'load',
          'operations/s',
          "handlers' records/s",
          'stream: records per busy s; per lane-busy s × lanes; a batch',
          'per busy s ÷ burst',
          "stream's rate ÷ handlers'",
          'handled ÷ written, last two thirds',
          'counts exact after the load (≤ 2 s)',
        ],
        rows,
      ),
      '',
    );
  }
  const lone = after.lone;
  if (lone) {
    const gathered = after.loneGathered;
    const row = (name: string, share: Share, batches: number, target: boolean) => [
      name,
      pair(share),
      String(batches),
      target ? `≤ 2 requests ${mark(share.requests <= 2)}` : '—',
    ];
    lines.push(
      `A lone claim (bench/stream.ts \`lone\`): one client, ${lone.claims} claims one after another, then their releases; the stream function's requests / capacity units, with each record its own batch on the local stream (issue 34's row)${gathered ? `, and with the records batched as \`npm start\` batches them (gathered for ${gathered.windowMs} ms; the deployed mapping gathers for up to 1 s, so at least as much)` : ''}:`,
      '',
      table(
        ['', 'stream requests / units', 'batches', 'target'],
        [
          row('per claim, each record its own batch', lone.perClaim, lone.batchesPerClaim, true),
          row('per release, each record its own batch', lone.perRelease, lone.batchesPerRelease, true),
          ...(gathered
            ? [
                row('per claim, batched', gathered.perClaim, gathered.batchesPerClaim, false),
                row('per release, batched', gathered.perRelease, gathered.batchesPerRelease, false),
              ]
            : []),
        ],
      ),
      '',
    );
  }
  if (after.loadAverage)
    lines.push(
      `(One run at ${after.commit}, on this shared 2-core machine with a load average of ${after.loadAverage.start} at its start and ${after.loadAverage.end} at its end; the store, dynalite, serves every call on one core, so the rates are this machine's, and move with its load.)`,
      '',
    );
  return lines;
}
