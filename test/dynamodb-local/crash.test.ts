/**
 * `ALLOT_STORE=dynamodb-local npm start` killed with -9 right after releases whose Recycle is the stream's
 * to do: DynamoDB Local goes with it (no JVM left behind), and the server started again on the same data
 * folder finishes what the killed one left (the released claims' Recycle, the counts) and resumes after its
 * checkpoints: the records done before the kill are not delivered again (their events are not published
 * twice).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { claim, client, eventually, indexPool } from '../helpers/allot.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'allot-crash-'));
const running = new Set<ChildProcess>();

afterAll(() => {
  for (const server of running) server.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** `npm start` as one process (node with tsx's loader, not the tsx CLI, which would fork another). */
async function startServer(): Promise<{ server: ChildProcess; url: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ALLOT_STORE: 'dynamodb-local',
    ALLOT_DATA_DIR: dataDir,
    PORT: '0',
  };
  delete env.ALLOT_DYNAMODB_LOCAL_ENDPOINT; // its own DynamoDB Local, on its own data folder
  const server = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.add(server);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const found = /Allot listening on (\S+)/.exec(out)?.[1];
      if (found) resolve(found);
    });
    server.once('exit', (code) =>
      reject(new Error(`the server exited (${code}) before it listened: ${out}`)),
    );
  });
  return { server, url };
}

/** The JVMs a process started (tsx's esbuild service is a child too). */
function javaChildrenOf(pid: number): number[] {
  const listed = spawnSync('ps', ['-o', 'pid=,comm=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  return listed
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, command]) => command === 'java')
    .map(([childPid]) => Number(childPid));
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('DynamoDB Local store, killed with -9', () => {
  it('leaves no DynamoDB Local behind, and a restart resumes the stream and finishes its work', async () => {
    const first = await startServer();
    const api = client(first.url);
    expect((await api.post('indexpools', indexPool('crash', ['1..100']))).status).toBe(201);
    for (let n = 0; n < 20; n++) {
      expect((await api.post('claims', claim(`c${n}`, { kind: 'IndexPool', name: 'crash' }))).status).toBe(
        201,
      );
    }
    await eventually(async () => expect((await api.get('indexpools/crash')).body.status.allocated).toBe(20));
    const allocatedEvents = () =>
      readFileSync(join(dataDir, 'events.jsonl'), 'utf8')
        .split('\n')
        .filter((line) => line.includes('"detail-type":"Claim Allocated"')).length;
    await eventually(async () => expect(allocatedEvents()).toBe(20));
    const jvms = javaChildrenOf(first.server.pid!);
    expect(jvms.length).toBe(1);

    // Releases whose Recycle (deleting the allocation objects) is the stream's to do, then the kill.
    for (let n = 0; n < 10; n++) expect((await api.delete(`claims/c${n}`)).status).toBe(200);
    first.server.kill('SIGKILL');
    await new Promise((resolve) => first.server.once('exit', resolve));
    running.delete(first.server);
    await eventually(async () => expect(jvms.filter(alive)).toEqual([]), 10_000);

    const second = await startServer();
    const again = client(second.url);
    await eventually(async () => {
      const indices = (await again.get('indices')).body.items as { spec: { claimRef?: { name: string } } }[];
      expect(indices.map((index) => index.spec.claimRef?.name).sort()).toEqual(
        Array.from({ length: 10 }, (_, n) => `c${n + 10}`).sort(),
      );
      expect((await again.get('indexpools/crash')).body.status.allocated).toBe(10);
    }, 20_000);
    // Resumed after its checkpoints: the allocations' records, done before the kill, came not again.
    expect(allocatedEvents()).toBe(20);
    const folder = join(dataDir, 'dynamodb-local');
    const checkpoint = readdirSync(folder).find((name) => name.startsWith('stream-checkpoints-'));
    expect(checkpoint && existsSync(join(folder, checkpoint))).toBeTruthy();
    const shards = Object.values(JSON.parse(readFileSync(join(folder, checkpoint!), 'utf8')).shards);
    expect(shards.some((shard) => (shard as { sequence?: string }).sequence)).toBe(true);

    second.server.kill('SIGTERM');
    expect(await new Promise((resolve) => second.server.once('exit', resolve))).toBe(0);
    running.delete(second.server);
  }, 120_000);
});
