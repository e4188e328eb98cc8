/**
 * Every `npx allot …` session shown in the docs is what the CLI prints: each file's console blocks are
 * replayed, in order, against a fresh local server, and compared (timestamps and uids masked).
 * `UPDATE_DOCS=1 npx vitest run test/cli/docs.test.ts` writes the real output into the files instead.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startTestAllot } from '../helpers/allot.ts';
import { run } from '../../lib/cli/main.ts';
import { consoleSessions, maskRunVariance, rewriteSessions } from '../helpers/doc-sessions.ts';
import { markdownFiles } from '../docs/markdown.ts';

const PROMPT = '$ npx allot ';

/** Console blocks made only of `$ npx allot` commands and their output. */
const sessions = (lines: string[]) =>
  consoleSessions(lines, PROMPT, {
    takes: (prompts) => prompts.length > 0 && prompts.every((line) => line.startsWith(PROMPT)),
    argvOf: (line) => line.slice(PROMPT.length).split(/\s+/).filter(Boolean),
  });

const mask = maskRunVariance;

const files = markdownFiles().filter((file) => sessions(readFileSync(file, 'utf8').split('\n')).length > 0);

describe('the docs show what allot prints', () => {
  it('has sessions to check in the quick start, the CLI page and each pool page', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/quickstart.md',
        'docs/cli.md',
        'docs/pools/indexpool.md',
        'docs/pools/ipaddresspool.md',
        'docs/pools/ipprefixpool.md',
      ]),
    );
  });

  it.each(files)('%s', async (file) => {
    const lines = readFileSync(file, 'utf8').split('\n');
    const allot = await startTestAllot();
    const replaced: string[][] = [];
    try {
      for (const session of sessions(lines)) {
        const block: string[] = [];
        for (const command of session.commands) {
          // A reader types slower than the local stream applies effects (about 100 ms): wait as they would.
          await allot.stream?.drained();
          await allot.history?.drained();
          const printed: string[] = [];
          await run(command.argv, {
            out: (text) => printed.push(...text.split('\n')),
            err: (text) => printed.push(...text.split('\n')),
            readStdin: async () => '',
            env: { ALLOT_ENDPOINT: allot.url },
          });
          if (!process.env.UPDATE_DOCS) {
            expect(mask(printed.join('\n')), `${file}: ${command.line}`).toBe(
              mask(command.expected.join('\n')),
            );
          }
          block.push(command.line, ...printed);
        }
        replaced.push(block);
      }
    } finally {
      await allot.close();
    }
    if (process.env.UPDATE_DOCS) rewriteSessions(file, lines, sessions(lines), replaced);
  });
});
