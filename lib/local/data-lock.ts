/**
 * One server per data folder (issue 22): dynalite's LevelDB, DynamoDB Local's SQLite file, the stream
 * journal and the checkpoints all assume a single writer, and a second server on the folder used to die
 * deep in dynalite ("Database is closed"). The server holds the folder with a lock file that says who
 * holds it, so a second one can say so in one line.
 *
 * The lock is the highest-numbered `server-<n>.lock` of the folder, a JSON line: the holder's pid (and,
 * on Linux, its start time, so a pid reused after a crash is not taken for the holder), its port, and its
 * state (`starting`, `running`, `stopping`, `stopped`). Every version is written whole to a temporary
 * file first, so no reader ever sees half of one.
 *
 * How a race is decided: a server that finds the top lock free (stopped, or its process gone: a server
 * killed with -9 leaves it) creates the next number with `link()`, which fails when the name exists, so
 * of the servers that saw the same top one only one gets it (PostgreSQL's postmaster.pid does the
 * same with O_EXCL, and removes a stale file first; removing is what lets two servers both win there,
 * so here no lock file is ever removed while it may be the top one). The winner then looks again and
 * gives up if a higher number appeared, or if a lower one is held by a live process (a server that saw
 * an older folder): of two servers holding files at once, the later one to look sees the other, so two
 * never both win. Only then does it remove the lower files.
 *
 * A lock that says `stopped` while its process still runs is a server in its last milliseconds (its
 * stores are closed or abandoned as a crash would leave them): the next one waits for that process to
 * be gone before it opens the folder, so it never meets LevelDB's own lock still held.
 */
import { randomBytes } from 'node:crypto';
import {
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';

export type LockState = 'starting' | 'running' | 'stopping' | 'stopped';

/** What a lock file says. */
export interface LockHolder {
  pid: number;
  /** The process's start time in clock ticks since boot (Linux: /proc/<pid>/stat, field 22). */
  pidStart?: string;
  port?: number;
  url?: string;
  state: LockState;
  /** When the server took the folder (ISO 8601). */
  since: string;
}

/** The folder is held by a live server: `message` is the one line to print. */
export class DataFolderInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    const where = holder.port === undefined ? 'no port yet' : `port ${holder.port}`;
    super(
      `the data folder ${dataDir} is in use by another Allot server (pid ${holder.pid}, ${where}, ${holder.state}` +
        ` since ${holder.since}); stop it, or set ALLOT_DATA_DIR to another folder`,
    );
    this.name = 'DataFolderInUseError';
  }
}

const LOCK_NAME = /^server-(\d+)\.lock$/;
const lockName = (n: number) => `server-${n}.lock`;
/** How long a new server waits for a stopped one's process to be gone before it opens the folder. */
const GONE_WAIT_MS = 2000;
/** Lock files held by this process (a pid equal to ours in any other is a reused one: not a holder). */
const heldHere = new Set<string>();

export class DataLock {
  private holder: LockHolder;

  private constructor(
    readonly path: string,
    holder: LockHolder,
  ) {
    this.holder = holder;
  }

  /**
   * Takes the folder (creating it): throws DataFolderInUseError when a live server holds it. Waits, at
   * most two seconds, for a server that has just stopped to be gone.
   */
  static async acquire(dataDir: string): Promise<DataLock> {
    const folder = resolve(dataDir);
    mkdirSync(folder, { recursive: true });
    for (let attempt = 0; attempt < 10; attempt++) {
      const top = readLocks(folder).at(-1);
      if (top && live(top)) throw new DataFolderInUseError(dataDir, top.holder!);
      const n = (top?.n ?? 0) + 1;
      const path = join(folder, lockName(n));
      const holder: LockHolder = {
        pid: process.pid,
        pidStart: startOf(process.pid),
        state: 'starting',
        since: new Date().toISOString(),
      };
      if (!createExclusive(path, holder)) continue; // another server took n first: look again
      heldHere.add(path);
      const others = readLocks(folder).filter((lock) => lock.n !== n);
      const rival = others.find((lock) => lock.n > n) ?? others.find((lock) => lock.n < n && live(lock));
      if (rival) {
        heldHere.delete(path);
        unlinkSync(path);
        if (live(rival)) throw new DataFolderInUseError(dataDir, rival.holder!);
        continue;
      }
      // A server of this process that stopped (a restart in tests) is gone already: only others' exits.
      const exiting = others.filter(
        (lock) => lock.holder?.state === 'stopped' && lock.holder.pid !== process.pid,
      );
      await waitGone(exiting.map((lock) => lock.holder!));
      for (const lock of others) removeQuietly(lock.path);
      for (const name of readdirSync(folder)) {
        const pid = /^\.server\.lock\.(\d+)\./.exec(name)?.[1];
        if (pid && !running(Number(pid))) removeQuietly(join(folder, name));
      }
      return new DataLock(path, holder);
    }
    throw new Error(`the data folder ${dataDir} is contended: could not take its lock`);
  }

  /** Records what a second server should say about this one (its port, its state). */
  update(change: Partial<Pick<LockHolder, 'port' | 'url' | 'state'>>): void {
    if (this.holder.state === 'stopped') return;
    this.holder = { ...this.holder, ...change };
    try {
      writeWhole(this.path, this.holder);
    } catch {
      // The folder went away under the server: there is nothing left to hold, nor to say.
    }
  }

  /** Gives the folder up (synchronous, so it can be the last thing a process does). */
  release(): void {
    if (this.holder.state === 'stopped') return;
    this.update({ state: 'stopped' });
    heldHere.delete(this.path);
  }
}

interface FoundLock {
  n: number;
  path: string;
  /** Undefined when unreadable: never one we wrote (every version is written whole), so not a holder. */
  holder?: LockHolder;
}

/** The folder's lock files, lowest number first. */
function readLocks(folder: string): FoundLock[] {
  const found: FoundLock[] = [];
  for (const name of readdirSync(folder)) {
    const n = LOCK_NAME.exec(name)?.[1];
    if (n === undefined) continue;
    let holder: LockHolder | undefined;
    try {
      holder = JSON.parse(readFileSync(join(folder, name), 'utf8')) as LockHolder;
    } catch {
      holder = undefined; // removed since the listing, or not ours
    }
    found.push({ n: Number(n), path: join(folder, name), holder });
  }
  return found.sort((a, b) => a.n - b.n);
}

/** Whether a lock file is held: not stopped, and its process is the one that wrote it, still running. */
function live(lock: FoundLock): boolean {
  const holder = lock.holder;
  if (!holder || holder.state === 'stopped' || typeof holder.pid !== 'number') return false;
  if (holder.pid === process.pid) return heldHere.has(lock.path);
  return running(holder.pid, holder.pidStart);
}

/** Writes `holder` as a new file at `path`, unless the name exists (then false). */
function createExclusive(path: string, holder: LockHolder): boolean {
  const temporary = temporaryBeside(path);
  writeFileSync(temporary, `${JSON.stringify(holder)}\n`);
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    removeQuietly(temporary);
  }
}

/** Replaces the file at `path` whole (a rename), so a reader sees the old version or the new one. */
function writeWhole(path: string, holder: LockHolder): void {
  const temporary = temporaryBeside(path);
  writeFileSync(temporary, `${JSON.stringify(holder)}\n`);
  renameSync(temporary, path);
}

function temporaryBeside(path: string): string {
  return join(path, '..', `.server.lock.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/**
 * Whether `pid` is a running process (and, when `start` is known, the same one: pids are reused). On
 * Linux from /proc, where a zombie (killed, not yet reaped) counts as gone; elsewhere by signal 0.
 */
function running(pid: number, start?: string): boolean {
  const stat = procStat(pid);
  if (stat === null) return false;
  if (stat !== undefined) {
    const [state, , , , , , , , , , , , , , , , , , , startTime] = stat;
    if (state === 'Z' || state === 'X') return false;
    return start === undefined || startTime === start;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // it exists, another user's
  }
}

function startOf(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/**
 * The fields of /proc/<pid>/stat from the third on (state first), null when there is no such process,
 * undefined where there is no /proc (not Linux).
 */
function procStat(pid: number): string[] | null | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    try {
      readFileSync('/proc/self/stat');
      return null;
    } catch {
      return undefined;
    }
  }
}

async function waitGone(holders: readonly LockHolder[]): Promise<void> {
  const until = Date.now() + GONE_WAIT_MS;
  while (holders.some((holder) => running(holder.pid, holder.pidStart)) && Date.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 20));
}
