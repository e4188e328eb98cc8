/**
 * Every `$ curl …` session shown in the docs is what the API answers: each page's console blocks of curl
 * commands are replayed, in order, against a fresh local server with `$B` and `$T` pointing at it, and
 * compared (timestamps and uids masked). `UPDATE_DOCS=1 npx vitest run test/docs/curl.test.ts` writes
 * the real output into the pages instead. The commands run in bash with the real curl and jq; without
 * them the replay skips with one line, and fails under CI=true.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startTestAllot } from '../helpers/allot.ts';
import { consoleSessions, maskRunVariance, rewriteSessions } from '../helpers/doc-sessions.ts';
import { markdownFiles } from './markdown.ts';

const PROMPT = '$ curl ';

const missingTools = ['curl', 'jq'].filter((tool) => {
  try {
    execFileSync('bash', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
});

const sessions = (lines: string[]) =>
  consoleSessions(lines, PROMPT, {
    takes: (prompts) => prompts.length > 0 && prompts.every((line) => line.startsWith(PROMPT)),
    argvOf: (line) => [line.slice(2)],
  });

function shell(command: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { env: { ...process.env, ...env } }, (_error, stdout, stderr) =>
      resolve((stdout + stderr).replace(/\n$/, '')),
    );
  });
}

const files = markdownFiles().filter((file) => sessions(readFileSync(file, 'utf8').split('\n')).length > 0);

describe('the docs show what the API answers to curl', () => {
  if (missingTools.length > 0) {
    if (process.env.CI !== 'true')
      console.log(`curl sessions: skipped, ${missingTools.join(' and ')} missing`);
    it.runIf(process.env.CI === 'true')('needs curl and jq under CI', () => {
      expect(missingTools, 'install them (see .ci/run)').toEqual([]);
    });
    return;
  }

  it('has sessions to check on the front page and the API page', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/api.md']));
  });

  it.each(files)('%s', async (file) => {
    const lines = readFileSync(file, 'utf8').split('\n');
    const allot = await startTestAllot();
    const env = { B: `${allot.url}/v1/namespaces/default`, T: `${allot.url}/v1/namespaces/team-a` };
    const replaced: string[][] = [];
    try {
      for (const session of sessions(lines)) {
        const block: string[] = [];
        for (const command of session.commands) {
          // A reader types slower than the local stream applies effects: wait as they would.
          await allot.stream?.drained();
          await allot.history?.drained();
          const printed = await shell(command.argv[0]!, env);
          if (!process.env.UPDATE_DOCS) {
            expect(maskRunVariance(printed), `${file}: ${command.line}`).toBe(
              maskRunVariance(command.expected.join('\n')),
            );
          }
          block.push(command.line, ...printed.split('\n'));
        }
        replaced.push(block);
      }
    } finally {
      await allot.close();
    }
    if (process.env.UPDATE_DOCS) rewriteSessions(file, lines, sessions(lines), replaced);
  });
});
