/**
 * Optional tiers that need a tool of this machine's image on PATH (the AWS CLI, cfn-lint): without it
 * their tests skip with one line saying so, except under CI=true, where the missing tool fails the run
 * (as the kubectl tier does, test/kubectl/support.ts).
 */
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';

/** Whether `command` is on PATH. */
export function haveCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Registers the one test that stands for the suite when `command` is missing: a skip line, or a CI
 * failure. Returns whether the command is there (the suite's own tests run only then).
 */
export function requireCommand(suite: string, command: string): boolean {
  if (haveCommand(command)) return true;
  if (process.env.CI !== 'true') console.log(`${suite}: skipped, ${command} is not on PATH`);
  it.runIf(process.env.CI === 'true')(`${suite} needs ${command} under CI`, () => {
    expect(haveCommand(command), `${command} is missing from this image`).toBe(true);
  });
  return false;
}
