/**
 * A watch's lag behind a write on the local server (part of bench/history.ts): `npm start`'s own entry
 * (bin/server.ts) in a process of its own on a fresh data folder, a watch on claims from the list's
 * resourceVersion, then CLAIMS claims made one after another by one client. For each, the time from the
 * write's answer to the watch's line that shows the claim as the answer did (its value): the
 * stream's delivery, the history function's append and the watch's read of it. The time from just
 * before the write to the claim's first line (ADDED) is reported beside it: that line can come before
 * the answer, whose claim is written first and allocated after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { call, startServer } from '../test/helpers/server-process.ts';
import { round } from './measure.ts';

const CLAIMS = Number(process.env.BENCH_LAG_CLAIMS ?? 200);

interface Arrivals {
  added?: number;
  allocated?: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const figure = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: round(percentile(sorted, 50), 1), p99: round(percentile(sorted, 99), 1) };
};

/** Reads a streamed watch's lines as they come, noting when each claim's ADDED and its value arrive. */
async function readWatch(body: ReadableStream<Uint8Array>, seen: Map<string, Arrivals>, onLine: () => void) {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    const at = performance.now();
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!line) continue;
      const event = JSON.parse(line) as { type: string; object: Record<string, any> };
      const name = event.object.metadata?.name as string | undefined;
      if (!name) continue;
      const arrivals = seen.get(name) ?? {};
      if (event.type === 'ADDED') arrivals.added ??= at;
      if (event.object.status?.value !== undefined) arrivals.allocated ??= at;
      seen.set(name, arrivals);
      onLine();
    }
  }
}

export async function watchLag() {
  const dataDir = mkdtempSync(join(tmpdir(), 'allot-bench-lag-'));
  const server = await startServer(dataDir);
  const watching = new AbortController();
  try {
    const created = await call(server.url, 'PUT', 'indexpools/lag', {
      metadata: { name: 'lag' },
      spec: { ranges: ['1..65535'] },
    });
    if (created.status >= 300) throw new Error(JSON.stringify(created.body));
    const listed = await call(server.url, 'GET', 'claims');
    const version = listed.body.metadata.resourceVersion as string;
    const response = await fetch(
      `${server.url}/v1/namespaces/default/claims?watch=true&resourceVersion=${version}`,
      { signal: watching.signal },
    );
    if (response.status !== 200 || !response.body) throw new Error(`watch: ${response.status}`);
    const seen = new Map<string, Arrivals>();
    let wake = () => {};
    const reading = readWatch(response.body, seen, () => wake()).catch((error: unknown) => {
      if (!watching.signal.aborted) throw error;
    });
    const writes: { name: string; before: number; answered: number }[] = [];
    for (let i = 0; i < CLAIMS; i++) {
      const name = `lag-${i}`;
      const before = performance.now();
      const answer = await call(server.url, 'POST', 'claims', {
        metadata: { name },
        spec: { poolRef: { kind: 'IndexPool', name: 'lag' } },
      });
      const answered = performance.now();
      if (answer.status !== 201 || answer.body.status?.value === undefined)
        throw new Error(`claim ${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
      writes.push({ name, before, answered });
    }
    // Every claim's lines, however late (a minute at most: a line lost is a failure, not a figure).
    const deadline = Date.now() + 60_000;
    while (writes.some(({ name }) => seen.get(name)?.allocated === undefined)) {
      if (Date.now() > deadline) throw new Error('the watch did not show every claim within a minute');
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 1000);
      });
    }
    watching.abort();
    await reading;
    const arrivals = writes.map((write) => ({ ...write, ...seen.get(write.name)! }));
    return {
      claims: CLAIMS,
      /** From the write's answer to the line showing the claim's value, ms. */
      fromAnswer: figure(arrivals.map((a) => a.allocated! - a.answered)),
      /** From just before the write to the claim's first line (ADDED), ms. */
      firstLineFromRequest: figure(arrivals.map((a) => a.added! - a.before)),
      /** The write itself (request to answer), ms: for scale. */
      write: figure(arrivals.map((a) => a.answered - a.before)),
    };
  } finally {
    watching.abort();
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}
