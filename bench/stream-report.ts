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
}
interface StreamResults {
  commit: string;
  parallelizationFactor: number;
  loadAverage?: { start: number; end: number };
  wholeLife?: Life[];
  throughput?: Throughput[];
  sustained?: Sustained;
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

  const load = after.sustained;
  if (load) {
    const then = before?.sustained;
    const row = [
      `${load.clients} clients, ${load.seconds} s, ${load.latencyMs} ms a call`,
      `${load.operationsPerSecond}${then ? was(String(then.operationsPerSecond)) : ''}`,
      `${load.handlersRecordsPerSecond}${then ? was(String(then.handlersRecordsPerSecond)) : ''}`,
      `${Math.round(load.handledShareAtLoadEnd * 100)} %${then ? was(`${Math.round(then.handledShareAtLoadEnd * 100)} %`) : ''}`,
      `${load.capacityRatio ?? '—'}${then ? was(String(then.rateRatio)) : ''}`,
      `${load.rateRatio}`,
      `${load.lagSeconds} s${then ? was(`${then.lagSeconds} s`) : ''}`,
      `ratio ≥ 1, ≤ 2 s ${mark((load.capacityRatio ?? 0) >= 1)} ${mark(load.lagSeconds <= 2)}`,
    ];
    lines.push(
      `Sustained load on the local stream of \`npm start\` (lib/local/stream/emulation.ts, ${load.parallelization} batches at once): clients claiming and releasing in turn, each its own instance and client, latency added to every call of every client; the stream's rate is the records it handled per second it was busy (any batch in flight), the handlers' the records their writes put on the stream per second, over the whole load; beside it, from a third into the load to its end, the records handled ÷ the records written in that window (at most 1: it is 1 less the backlog's growth):`,
      '',
      table(
        [
          'load',
          'operations/s',
          "handlers' records/s",
          'handled by the end of the load',
          "stream's rate ÷ handlers'",
          'handled ÷ written, last two thirds',
          'counts exact after the load',
          'target',
        ],
        [row],
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
