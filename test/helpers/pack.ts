/**
 * `npm pack` of this clone, as the package tests install it. Its prepack writes dist/ and its postpack
 * removes it (bin/pack.ts), so two packs of one clone at once would delete each other's build: test files
 * run in parallel workers, and pack one at a time under a lock (a folder, made atomically).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const LOCK = join(repositoryRoot, 'node_modules', '.allot-pack-lock');
/** Longer than any pack takes on a busy machine: a lock older than this was left by a killed run. */
const STALE_MS = 15 * 60_000;

async function acquire(): Promise<void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = statSync(LOCK, { throwIfNoEntry: false });
      if (!held) continue; // given up just now: try again at once
      if (Date.now() - held.mtimeMs > STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Packs the clone into `folder`; returns the tarball's path. */
export async function packInto(folder: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  await acquire();
  try {
    await run('npm', ['pack', '--pack-destination', folder, '--silent'], {
      cwd: repositoryRoot,
      env,
      maxBuffer: 64 << 20,
    });
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
  return join(
    folder,
    readdirSync(folder).find((file) => file.endsWith('.tgz'))!,
  );
}
