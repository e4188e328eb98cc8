/**
 * The real kubectl against Allot: `/usr/bin/kubectl` run with its own HOME (so its discovery cache is
 * fresh) and a kubeconfig from `allot kubeconfig` pointing at the server under test. Without the binary
 * the kubectl tests skip with one line, except under CI=true, where they fail.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { kubeconfig } from '../../lib/cli/kubeconfig.ts';

export const KUBECTL = '/usr/bin/kubectl';
export const haveKubectl = existsSync(KUBECTL);

/** Registers the one test that stands for the suite when kubectl is missing: a skip line, or a CI failure. */
export function requireKubectl(suite: string): void {
  if (haveKubectl) return;
  if (process.env.CI !== 'true') console.log(`${suite}: skipped, ${KUBECTL} is missing`);
  it.runIf(process.env.CI === 'true')(`${suite} needs ${KUBECTL} under CI`, () => {
    expect(existsSync(KUBECTL), `${KUBECTL} is missing; install kubectl (see .ci/run)`).toBe(true);
  });
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A kubectl running in the background: what it printed so far, and its end. */
export interface RunningKubectl {
  stdout(): string;
  stderr(): string;
  done: Promise<KubectlResult>;
  /** Ends it (SIGINT, as Ctrl-C). */
  stop(): void;
}

export interface Kubectl {
  run(args: readonly string[], stdin?: string): Promise<KubectlResult>;
  /** Starts kubectl and returns at once (a watch, a wait). */
  start(args: readonly string[]): RunningKubectl;
  /** The kubeconfig's path. */
  config: string;
  close(): Promise<void>;
}

/**
 * A kubectl for `server`, in a temp HOME with a kubeconfig made by `allot kubeconfig` (or none, for
 * `--server` alone).
 */
export async function kubectlFor(server: string, options: { kubeconfig?: boolean } = {}): Promise<Kubectl> {
  const cwd = process.cwd();
  const home = await mkdtemp(join(tmpdir(), 'allot-kubectl-'));
  const config = join(home, 'kubeconfig');
  if (options.kubeconfig !== false)
    await writeFile(
      config,
      `${kubeconfig({ local: server, proxy: 'http://127.0.0.1:8001', namespace: 'default', current: 'allot-local' })}\n`,
    );
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    KUBECONFIG: config,
    KUBECACHEDIR: join(home, 'cache'),
  };
  return {
    config,
    run: (args, stdin) =>
      new Promise((resolve) => {
        const child = execFile(KUBECTL, [...args], { env, cwd, timeout: 30_000 }, (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        });
        if (stdin !== undefined) child.stdin?.end(stdin);
      }),
    start(args) {
      const child = spawn(KUBECTL, [...args], { env, cwd });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const done = new Promise<KubectlResult>((resolve) =>
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code: code ?? 1, stdout, stderr });
        }),
      );
      return { stdout: () => stdout, stderr: () => stderr, done, stop: () => child.kill('SIGINT') };
    },
    close: () => rm(home, { recursive: true, force: true }),
  };
}
