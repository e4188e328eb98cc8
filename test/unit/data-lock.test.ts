/**
 * The data folder's lock (lib/local/data-lock.ts) on a real folder, with lock files written as other
 * servers would have left them: held by a live process (running or stopping) it refuses and names the
 * holder; left by a dead process, by one whose pid was reused, or stopped, it is taken; a stopped holder
 * still exiting is waited for; a lower file held by a live server (one that saw an older folder) makes a
 * new holder give up. The races between processes are test/faults/start-stop.test.ts's.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DataFolderInUseError, DataLock, type LockHolder } from '../../lib/local/data-lock.ts';

const folders: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});
afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'allot-lock-'));
  folders.push(dir);
  return dir;
}

/** A process that lives until killed (or for `ms`), to stand for another server. */
function liveProcess(ms = 60_000): ChildProcess {
  const child = spawn(process.execPath, ['-e', `setTimeout(() => {}, ${ms})`], { stdio: 'ignore' });
  children.push(child);
  return child;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

function leave(dir: string, n: number, holder: Partial<LockHolder>): void {
  const full: LockHolder = { pid: 0, state: 'running', since: '2026-01-01T00:00:00.000Z', ...holder };
  writeFileSync(join(dir, `server-${n}.lock`), `${JSON.stringify(full)}\n`);
}

/** Whether a process runs (Linux: a zombie, killed and not yet reaped, does not). */
function runs(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2)[0]!);
  } catch {
    return false;
  }
}

const lockFiles = (dir: string) => readdirSync(dir).filter((name) => name.includes('lock'));
const read = (dir: string, n: number) =>
  JSON.parse(readFileSync(join(dir, `server-${n}.lock`), 'utf8')) as LockHolder;

describe('the data folder lock', () => {
  it('is taken on a new folder, says who holds it, and is given up as stopped', async () => {
    const dir = join(folder(), 'data');
    const lock = await DataLock.acquire(dir);
    expect(read(dir, 1)).toMatchObject({ pid: process.pid, state: 'starting' });
    lock.update({ port: 8123, url: 'http://127.0.0.1:8123', state: 'running' });
    expect(read(dir, 1)).toMatchObject({ pid: process.pid, port: 8123, state: 'running' });
    await expect(DataLock.acquire(dir)).rejects.toThrow(
      `the data folder ${dir} is in use by another Allot server (pid ${process.pid}, port 8123, running since`,
    );
    lock.release();
    expect(read(dir, 1).state).toBe('stopped');
    const next = await DataLock.acquire(dir);
    expect(lockFiles(dir)).toEqual(['server-2.lock']);
    next.release();
  });

  it('refuses a folder a live server holds, running or stopping, and names it', async () => {
    const dir = folder();
    const other = liveProcess();
    leave(dir, 4, { pid: other.pid, port: 9000, state: 'stopping' });
    const refused = await DataLock.acquire(dir).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataFolderInUseError);
    expect((refused as DataFolderInUseError).holder).toMatchObject({ pid: other.pid, state: 'stopping' });
    expect((refused as Error).message).toContain(`(pid ${other.pid}, port 9000, stopping since`);
    expect(lockFiles(dir)).toEqual(['server-4.lock']);
  });

  it('takes a folder whose holder died (kill -9 leaves its lock running)', async () => {
    const dir = folder();
    leave(dir, 7, { pid: deadPid(), port: 9000, state: 'running' });
    const lock = await DataLock.acquire(dir);
    expect(lockFiles(dir)).toEqual(['server-8.lock']);
    lock.release();
  });

  it.runIf(process.platform === 'linux')(
    "takes a folder whose holder's pid now belongs to another process (its start time differs)",
    async () => {
      const dir = folder();
      const other = liveProcess();
      leave(dir, 1, { pid: other.pid, pidStart: '1', state: 'running' });
      const lock = await DataLock.acquire(dir);
      expect(lockFiles(dir)).toEqual(['server-2.lock']);
      lock.release();
    },
  );

  it.runIf(process.platform === 'linux')(
    'waits for a stopped server still exiting to be gone before it takes the folder',
    async () => {
      const dir = folder();
      const exiting = liveProcess(400);
      leave(dir, 1, { pid: exiting.pid, state: 'stopped' });
      const lock = await DataLock.acquire(dir);
      expect(runs(exiting.pid!)).toBe(false);
      lock.release();
    },
  );

  it('gives up when a lower lock is held by a live server (one that saw the folder as it was)', async () => {
    const dir = folder();
    const other = liveProcess();
    // A live holder at 2 and a dead one above it: the new server takes 4, sees 2 alive, and gives up.
    leave(dir, 2, { pid: other.pid, state: 'running', port: 9002 });
    leave(dir, 3, { pid: deadPid(), state: 'running' });
    await expect(DataLock.acquire(dir)).rejects.toThrow(`(pid ${other.pid}, port 9002, running since`);
    expect(lockFiles(dir).sort()).toEqual(['server-2.lock', 'server-3.lock']);
  });
});
