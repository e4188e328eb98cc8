/**
 * Starting and stopping the local server (issue 22), each case with bin/server.ts as a child process
 * (test/helpers/server-process.ts), on the store of the tier (in the DynamoDB Local tier each server
 * starts its own JVM on its data folder, as `ALLOT_STORE=dynamodb-local npm start` does):
 *
 * - a data folder in use: the second server prints one line naming the folder and the holder (its pid
 *   and port), exits 1, within a second; of servers started together on one folder, one wins; a lock
 *   left by a server killed with -9 does not block the next one;
 * - a port in use: one line naming the port, exit 1, and the folder is free again;
 * - SIGTERM and SIGINT under 16 clients calling (and a console-like poller on a kept-alive connection, and
 *   a watch held open, which the stop ends):
 *   exit 0 within 3 s of the signal (the contract's promise), no repair line after the signal; started
 *   again on the folder, the server applies what the stopped one had not: every invariant of the crash
 *   test holds;
 * - `npm start` sent SIGTERM (npm passes it to its shell only): the server stops all the same.
 *
 * The lines checked are the ones docs/local.md shows.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { Agent, request } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { recordFigure } from '../helpers/figures.ts';
import { seededRandom } from '../helpers/faults.ts';
import {
  claimLoad,
  createPools,
  healed,
  spawnServer,
  startServer,
  type ServerProcess,
  type TestPool,
} from '../helpers/server-process.ts';

const CLIENTS = 16;
const STOP_WITHIN_MS = 3000;
const POOLS: readonly TestPool[] = [
  { name: 'recycled', reclaimPolicy: 'Recycle', range: '1..300' },
  { name: 'retained', reclaimPolicy: 'Retain', range: '1..1000' },
];
/** What is decided before the store opens (the folder, the port, npm's signal) is alike on every store: tested once. */
const storeIndependent = it.skipIf(process.env.ALLOT_STORE === 'dynamodb-local');
/** Each server its own store: in the DynamoDB Local tier, its own JVM (the tier's shared one has other tables). */
const OWN_STORE = { ALLOT_DYNAMODB_LOCAL_ENDPOINT: '' };
const seed = Number(process.env.STOP_SEED ?? Date.now() % 100_000);
const random = seededRandom(seed);

const folders: string[] = [];
const running: ServerProcess[] = [];
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'allot-stop-'));
  folders.push(dir);
  return dir;
}
function track<T extends ServerProcess>(server: T): T {
  running.push(server);
  return server;
}

afterEach(() => {
  for (const server of running.splice(0)) server.child.kill('SIGKILL');
});
afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

/**
 * The lines docs/local.md shows in its code blocks, as shapes (numbers and the folder made alike), so
 * what the page says the server prints is what it prints.
 */
const documented = new Set(
  readFileSync(join(import.meta.dirname, '../../docs/local.md'), 'utf8')
    .split(/^```.*$/m)
    .filter((_, index) => index % 2 === 1)
    .flatMap((block) => block.split('\n'))
    .map((line) => shapeOf(line)),
);
function shapeOf(line: string): string {
  return line.replace(/the data folder \S+ is/, 'the data folder DIR is').replace(/\d+/g, 'N');
}

/** The lines a process printed. */
const linesOf = (server: ServerProcess) => server.log.join('').split('\n').filter(Boolean);

describe('a data folder in use', () => {
  storeIndependent(
    'a second server says which server holds it, in one line, and exits 1 within a second',
    async () => {
      const dir = folder();
      const first = track(await startServer(dir, OWN_STORE));
      const port = new URL(first.url).port;
      const started = performance.now();
      const second = track(spawnServer({ ALLOT_DATA_DIR: dir, ...OWN_STORE }));
      const code = await second.exited;
      const elapsedMs = performance.now() - started;
      recordFigure('folder in use', { exitMs: Math.round(elapsedMs) });
      expect(code).toBe(1);
      expect(linesOf(second)).toEqual([
        `Allot: the data folder ${dir} is in use by another Allot server (pid ${first.child.pid}, port ${port}, running since ${lockOf(dir).since}); stop it, or set ALLOT_DATA_DIR to another folder`,
      ]);
      expect(documented).toContain(shapeOf(linesOf(second)[0]!));
      expect(elapsedMs).toBeLessThan(1000);
      // The first one was not disturbed.
      expect((await fetch(`${first.url}/v1/namespaces/default/indexpools`)).status).toBe(200);
    },
    90_000,
  );

  storeIndependent(
    'of three servers started at once on one folder, one serves and the others name it',
    async () => {
      const dir = folder();
      const servers = [0, 1, 2].map(() => track(spawnServer({ ALLOT_DATA_DIR: dir, ...OWN_STORE })));
      const outcome = await Promise.all(
        servers.map((server) =>
          Promise.race([
            server.exited.then((code) => ({ server, code })),
            new Promise<{ server: ServerProcess; code: 'listening' }>((resolve) => {
              const check = () => {
                if (/listening on/.test(server.log.join(''))) resolve({ server, code: 'listening' });
              };
              server.child.stdout!.on('data', check);
            }),
          ]),
        ),
      );
      const winners = outcome.filter((one) => one.code === 'listening');
      const losers = outcome.filter((one) => one.code !== 'listening');
      expect(winners).toHaveLength(1);
      const pid = winners[0]!.server.child.pid;
      for (const loser of losers) {
        expect(loser.code).toBe(1);
        const lines = linesOf(loser.server);
        expect(lines).toHaveLength(1);
        // The winner may not listen yet when a loser looks: then the line says it has no port yet.
        expect(lines[0]).toMatch(
          new RegExp(`^Allot: the data folder ${dir} is in use by another Allot server \\(pid ${pid}, `),
        );
      }
    },
    120_000,
  );

  it('a lock left by a server killed with -9 does not block the next start', async () => {
    const dir = folder();
    const first = track(await startServer(dir, OWN_STORE));
    first.child.kill('SIGKILL');
    await first.exited;
    expect(lockOf(dir)).toMatchObject({ pid: first.child.pid, state: 'running' });
    const second = track(await startServer(dir, OWN_STORE));
    expect(lockOf(dir)).toMatchObject({ pid: second.child.pid, state: 'running' });
  }, 120_000);
});

describe('a port in use', () => {
  let blocker: Server | undefined;
  afterAll(() => blocker?.close());

  storeIndependent(
    'one line names the port, exit 1, and the data folder is given up',
    async () => {
      blocker = createServer();
      const port = await new Promise<number>((resolve) =>
        blocker!.listen(0, '127.0.0.1', () => resolve((blocker!.address() as { port: number }).port)),
      );
      const dir = folder();
      const server = track(spawnServer({ ALLOT_DATA_DIR: dir, PORT: String(port), ...OWN_STORE }));
      expect(await server.exited).toBe(1);
      expect(linesOf(server)).toEqual([
        `Allot: port ${port} is in use; set PORT to another port (PORT=0 takes any free one)`,
      ]);
      expect(lockOf(dir)).toMatchObject({ pid: server.child.pid, state: 'stopped' });
      // Given up indeed: the next server on the folder starts.
      track(await startServer(dir, OWN_STORE));
    },
    120_000,
  );
});

describe.each(['SIGTERM', 'SIGINT'] as const)('%s under load', (signal) => {
  it(`exits within 3 s with ${CLIENTS} clients calling, and a restart applies what it left`, async () => {
    const dir = folder();
    // Sweeps back to back, so one is likely in flight when the signal comes.
    const server = track(await startServer(dir, { ...OWN_STORE, ALLOT_REPAIR_INTERVAL_MS: '200' }));
    await createPools(server.url, POOLS);
    const stop = { stopped: false, answered: 0 };
    const load = claimLoad(server.url, { pools: POOLS, clients: CLIENTS, names: 60, random, stop });
    // A console tab: a kept-alive connection polling every 2 s, and one kept alive, idle.
    const poller = keptAlivePoller(server.url, 2000);
    // A controller following claims: a watch held open, which the stop must end, not wait for.
    const watching = heldWatch(`${server.url}/v1/namespaces/default/claims?watch=true`);
    // The signal comes under load: every client has been answered a few times over, on average, and a
    // repair sweep has had time to start (however slow the machine is today).
    const loadFor = 2500 + random() * 1500;
    const loaded = Date.now();
    while (stop.answered < 2 * CLIENTS || Date.now() - loaded < loadFor)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const signalled = performance.now();
    server.child.kill(signal);
    const code = await server.exited;
    const stopMs = performance.now() - signalled;
    stop.stopped = true;
    poller.stop();
    const operations = await load;
    const watched = await watching.ended;
    const lines = linesOf(server);
    const stopping = lines.indexOf(`Allot: stopping (${signal})`);
    // The server's own measure, from when its handler ran: the rest is the signal and the exit reaching us.
    const ownMs = Number(/^Allot: stopped in (\d+) ms/m.exec(lines.join('\n'))?.[1] ?? -1);
    const cutShort = lines.some((line) => line.includes('; cut short: ')) ? 1 : 0;
    recordFigure(`stop on ${signal}`, {
      clients: CLIENTS,
      operations,
      stopMs: Math.round(stopMs),
      ownMs,
      cutShort,
      watchEvents: watched.events,
    });
    if (stopMs >= STOP_WITHIN_MS) console.log(lines.slice(stopping).join('\n'));
    expect(code).toBe(0);
    expect(stopMs).toBeLessThan(STOP_WITHIN_MS);
    expect(stopping).toBeGreaterThanOrEqual(0);
    // As docs/local.md shows them (its example is a Ctrl-C).
    expect(documented).toContain(shapeOf(lines[stopping]!.replace(signal, 'SIGINT')));
    // (Requests cut off may log their failure in between.)
    const stoppedLine = lines.find((line) => line.startsWith('Allot: stopped in '));
    expect(documented).toContain(shapeOf(stoppedLine!.replace(/; cut short: .*/, '')));
    expect(lines.slice(stopping + 1).filter((line) => line.startsWith('repair'))).toEqual([]);
    expect(lockOf(dir)).toMatchObject({ pid: server.child.pid, state: 'stopped' });
    // The watch saw the load, and the stop ended its answer (the chunked body's last chunk), as a
    // Kubernetes API server ends a watch: the client sees the end, not a connection reset.
    expect(watched.events).toBeGreaterThan(0);
    expect(watched.how).toBe('ended');

    const restarted = track(await startServer(dir, OWN_STORE));
    const { found, healedMs } = await healed(restarted.url, POOLS, 60_000);
    if (found.length > 0) console.log(restarted.log.join('').slice(-4000));
    const replayed = Number(/stream: (\d+) record\(s\) kept/.exec(restarted.log.join(''))?.[1] ?? 0);
    recordFigure(`restart after ${signal}`, {
      seed,
      replayedRecords: replayed,
      healedMs,
      violations: found.length,
    });
    expect(found).toEqual([]);
  }, 180_000);
});

describe('npm start', () => {
  storeIndependent(
    'stops its server when npm is sent SIGTERM (npm passes it to its shell only)',
    async () => {
      const dir = folder();
      const npm = spawn('npm', ['start', '--silent'], {
        env: { ...process.env, PORT: '0', ALLOT_DATA_DIR: dir, ...OWN_STORE },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const server: ServerProcess = {
        child: npm,
        log: [],
        exited: new Promise((resolve) => npm.once('exit', resolve)),
      };
      track(server);
      npm.stderr!.on('data', (chunk: Buffer) => server.log.push(chunk.toString()));
      await new Promise<void>((resolve) =>
        npm.stdout!.on('data', (chunk: Buffer) => {
          server.log.push(chunk.toString());
          if (/listening on/.test(server.log.join(''))) resolve();
        }),
      );
      const pid = Number(lockOf(dir).pid);
      const signalled = performance.now();
      npm.kill('SIGTERM');
      while (lockOf(dir).state !== 'stopped' || runs(pid))
        await new Promise((resolve) => setTimeout(resolve, 20));
      const stopMs = performance.now() - signalled;
      expect(linesOf(server)).toContain('Allot: stopping (npm exited)');
      expect(stopMs).toBeLessThan(STOP_WITHIN_MS);
    },
    60_000,
  );
});

/** Whether a process runs (on Linux a zombie, ended but not yet reaped by its new parent, does not). */
function runs(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2)[0]!);
  } catch {
    if (process.platform === 'linux') return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The folder's lock (lib/local/data-lock.ts): its highest-numbered file. */
function lockOf(dir: string): Record<string, unknown> {
  const names = readdirSync(dir).filter((name) => /^server-\d+\.lock$/.test(name));
  const top = names.sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0])).at(-1);
  if (!top) throw new Error(`no lock in ${dir}`);
  return JSON.parse(readFileSync(join(dir, top), 'utf8')) as Record<string, unknown>;
}

/** A watch held open: how many events it got, and whether its answer ended or its connection broke. */
function heldWatch(url: string): { ended: Promise<{ events: number; how: 'ended' | 'broken' }> } {
  let events = 0;
  const ended = new Promise<{ events: number; how: 'ended' | 'broken' }>((resolve) => {
    const sent = request(url, (response) => {
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (events += chunk.split('\n').filter(Boolean).length));
      response.on('end', () => resolve({ events, how: 'ended' }));
      response.on('error', () => resolve({ events, how: 'broken' }));
    });
    sent.on('error', () => resolve({ events, how: 'broken' }));
    sent.end();
  });
  return { ended };
}

/** GETs the pool list every `everyMs` on one kept-alive socket, and holds a second one idle. */
function keptAlivePoller(url: string, everyMs: number): { stop(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const get = () =>
    new Promise<void>((resolve) => {
      const sent = request(`${url}/v1/namespaces/default/indexpools`, { agent }, (response) => {
        response.resume();
        response.on('end', resolve);
        response.on('error', () => resolve());
      });
      sent.on('error', () => resolve());
      sent.end();
    });
  void Promise.all([get(), get()]);
  const timer = setInterval(() => void get(), everyMs);
  return {
    stop() {
      clearInterval(timer);
      agent.destroy();
    },
  };
}
