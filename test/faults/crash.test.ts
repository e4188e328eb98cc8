/**
 * Nothing stays lost across a crash (issue 14): the local server (bin/server.ts) as a child process on a
 * temporary data folder, concurrent claims and releases on a Recycle and a Retain pool over HTTP, killed
 * with SIGKILL at a random moment, several rounds, each restarted on the same folder. After the last
 * restart, within 60 s: no allocation object bound to a missing claim, no claim mid-allocation, every
 * pool's counts equal a recount, no value held twice, and no claim waiting while its pool has room.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordFigure } from '../helpers/figures.ts';
import { seededRandom } from '../helpers/faults.ts';

const ROUNDS = 3;
const CLIENTS = 8;
const NAMES = 24;
const HEAL_WITHIN_MS = 60_000;
const POOLS = [
  { name: 'recycled', reclaimPolicy: 'Recycle', ranges: ['1..500'] },
  { name: 'retained', reclaimPolicy: 'Retain', ranges: ['1..2000'] },
] as const;

const dataDir = mkdtempSync(join(tmpdir(), 'allot-crash-'));
const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
const random = seededRandom(seed);
interface Server {
  child: ChildProcess;
  url: string;
  log: string[];
  exited: Promise<unknown>;
}
let server: Server | undefined;

afterAll(() => {
  server?.child.kill('SIGKILL');
  if (process.env.CRASH_KEEP) console.log(`data kept in ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
});

/** Starts `npm start`'s entry point on the data folder; resolves with its URL once it listens. */
function startServer(): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
    env: { ...process.env, PORT: '0', ALLOT_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${log.join('')}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      log.push(text);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ child, url, log, exited });
      }
    });
    void exited.then((code) => reject(new Error(`the server exited (${String(code)}): ${log.join('')}`)));
  });
}

async function call(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}/v1/namespaces/default/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** Every item of a list route, page after page. */
async function listAll(url: string, path: string): Promise<any[]> {
  const items: any[] = [];
  let token: string | undefined;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page = await call(url, 'GET', `${path}${separator}limit=1000${token ? `&continue=${token}` : ''}`);
    if (page.status !== 200) throw new Error(`GET ${path}: ${page.status}`);
    items.push(...page.body.items);
    token = page.body.metadata?.continue;
  } while (token);
  return items;
}

/** Claims and releases at random until the server goes away; returns how many answers came back. */
async function load(url: string, stop: { killed: boolean }): Promise<number> {
  let answered = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (!stop.killed) {
        const pool = POOLS[Math.floor(random() * POOLS.length)]!;
        const name = `${pool.name}-c${Math.floor(random() * NAMES)}`;
        try {
          if (random() < 0.55)
            await call(url, 'PUT', `claims/${name}`, {
              metadata: { name },
              spec: { poolRef: { kind: 'IndexPool', name: pool.name } },
            });
          else await call(url, 'DELETE', `claims/${name}`);
          answered++;
        } catch {
          return; // the server was killed under this request
        }
      }
    }),
  );
  return answered;
}

/** The invariants of the issue, read through the API; none found is the pass. */
async function violations(url: string): Promise<string[]> {
  const found: string[] = [];
  const claims = await listAll(url, 'claims');
  const byName = new Map(claims.map((claim) => [claim.metadata.name as string, claim]));
  for (const claim of claims) {
    const condition = claim.status.conditions[0];
    if (condition?.status === 'Unknown') found.push(`claim ${claim.metadata.name} is mid-allocation`);
  }
  for (const pool of POOLS) {
    const objects = await listAll(url, `indices?pool=${pool.name}`);
    const shown = (await call(url, 'GET', `indexpools/${pool.name}`)).body.status;
    const values = new Set<number>();
    for (const object of objects) {
      const ref = object.spec.claimRef;
      if (values.has(object.spec.index)) found.push(`${pool.name}: ${object.spec.index} is held twice`);
      values.add(object.spec.index);
      if (ref?.uid && byName.get(ref.name)?.metadata.uid !== ref.uid)
        found.push(`${object.metadata.name} is bound to a missing claim ${ref.name}`);
    }
    const held = new Map<string, string>();
    for (const claim of claims.filter((c) => c.spec.poolRef.name === pool.name)) {
      const condition = claim.status.conditions[0];
      const value = claim.status.value;
      if (condition?.status === 'True') {
        const object = objects.find((o) => String(o.spec.index) === value);
        if (object?.spec.claimRef?.uid !== claim.metadata.uid)
          found.push(`claim ${claim.metadata.name} says ${value}, whose object is not bound to it`);
        if (held.has(value)) found.push(`${value} of ${pool.name} is held by two claims`);
        held.set(value, claim.metadata.name);
      }
      if (condition?.status === 'False' && Number(shown.free) > 0)
        found.push(`claim ${claim.metadata.name} waits (${condition.reason}) while ${pool.name} has room`);
    }
    const total = Number(pool.ranges[0].split('..')[1]);
    if (shown.allocated !== objects.length || Number(shown.free) !== total - objects.length)
      found.push(
        `${pool.name} says allocated ${shown.allocated}, free ${shown.free}; a recount gives ${objects.length}, ${total - objects.length}`,
      );
  }
  return found;
}

describe('a crash of the local server', () => {
  it('loses nothing: after SIGKILLs under load and a restart, every invariant holds within 60 s', async () => {
    let operations = 0;
    let kills = 0;
    let replayed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      server = await startServer();
      if (round === 0)
        for (const pool of POOLS)
          expect(
            (
              await call(server.url, 'PUT', `indexpools/${pool.name}`, {
                metadata: { name: pool.name },
                spec: { ranges: pool.ranges, reclaimPolicy: pool.reclaimPolicy },
              })
            ).status,
          ).toBeLessThan(300);
      const stop = { killed: false };
      const running = load(server.url, stop);
      await new Promise((resolve) => setTimeout(resolve, 800 + random() * 2200));
      server.child.kill('SIGKILL');
      stop.killed = true;
      kills++;
      operations += await running;
      await server.exited;
      replayed += replayedIn(server.log);
    }
    server = await startServer();
    const restarted = Date.now();
    let found: string[] = [];
    for (;;) {
      found = await violations(server.url);
      if (process.env.CRASH_DEBUG) console.log(Date.now() - restarted, found.slice(0, 5));
      if (found.length === 0 || Date.now() - restarted > HEAL_WITHIN_MS) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const healedMs = Date.now() - restarted;
    if (found.length > 0 || process.env.CRASH_DEBUG) console.log(server.log.join('').slice(-4000));
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
    expect(operations).toBeGreaterThan(ROUNDS * CLIENTS);
  }, 150_000);
});

/** How many records a start delivered from the journal (its log line). */
function replayedIn(log: string[]): number {
  const match = /stream: (\d+) record\(s\) kept/.exec(log.join(''));
  return match ? Number(match[1]) : 0;
}
