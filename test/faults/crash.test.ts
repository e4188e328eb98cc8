/**
 * Nothing stays lost across a crash (issue 14): the local server (bin/server.ts) as a child process on a
 * temporary data folder, concurrent claims and releases on a Recycle and a Retain pool over HTTP, killed
 * with SIGKILL at a random moment, several rounds, each restarted on the same folder. After the last
 * restart, within 60 s: no allocation object bound to a missing claim, no claim mid-allocation, every
 * pool's counts equal a recount, no value held twice, no claim waiting while its pool has room, and each
 * object's holding open, for its claim, and no other (docs/history.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordFigure } from '../helpers/figures.ts';
import { seededRandom } from '../helpers/faults.ts';
import {
  claimLoad,
  createPools,
  healed,
  startServer,
  type StartedServer,
  type TestPool,
} from '../helpers/server-process.ts';

const ROUNDS = 3;
const CLIENTS = 8;
const NAMES = 24;
const HEAL_WITHIN_MS = 60_000;
const POOLS: readonly TestPool[] = [
  { name: 'recycled', reclaimPolicy: 'Recycle', range: '1..500' },
  { name: 'retained', reclaimPolicy: 'Retain', range: '1..2000' },
];

const dataDir = mkdtempSync(join(tmpdir(), 'allot-crash-'));
const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
const random = seededRandom(seed);
let server: StartedServer | undefined;

afterAll(() => {
  server?.child.kill('SIGKILL');
  if (process.env.CRASH_KEEP) console.log(`data kept in ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
});

describe('a crash of the local server', () => {
  it('loses nothing: after SIGKILLs under load and a restart, every invariant holds within 60 s', async () => {
    let operations = 0;
    let kills = 0;
    let replayed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      server = await startServer(dataDir);
      if (round === 0) await createPools(server.url, POOLS);
      const stop = { stopped: false, answered: 0 };
      const running = claimLoad(server.url, { pools: POOLS, clients: CLIENTS, names: NAMES, random, stop });
      // Killed at a random moment under load: not before every client has had an answer, on average,
      // however slow the machine is today.
      const loadFor = 800 + random() * 2200;
      const loaded = Date.now();
      while (stop.answered < CLIENTS || Date.now() - loaded < loadFor)
        await new Promise((resolve) => setTimeout(resolve, 20));
      server.child.kill('SIGKILL');
      stop.stopped = true;
      kills++;
      operations += await running;
      await server.exited;
      replayed += replayedIn(server.log);
    }
    const restartedAt = new Date().toISOString();
    server = await startServer(dataDir);
    const { found, healedMs } = await healed(server.url, POOLS, HEAL_WITHIN_MS);
    if (found.length > 0 || process.env.CRASH_DEBUG)
      console.log(`restarted at ${restartedAt}\n${server.log.join('').slice(-4000)}`);
    replayed += replayedIn(server.log);
    const repairs = server.log
      .join('')
      .split('\n')
      .flatMap((line) => [...(/^repair: (.*)$/.exec(line)?.[1] ?? '').matchAll(/(\w+) (\d+)/g)])
      .reduce((sum, match) => sum + Number(match[2]), 0);
    recordFigure('crash test', {
      seed,
      rounds: ROUNDS,
      operations,
      kills,
      replayedRecords: replayed,
      repairs,
      healedMs,
      violations: found.length,
    });
    expect(found).toEqual([]);
  }, 150_000);
});

/** How many records a start delivered from the journal (its log line). */
function replayedIn(log: string[]): number {
  const match = /stream: (\d+) record\(s\) kept/.exec(log.join(''));
  return match ? Number(match[1]) : 0;
}
