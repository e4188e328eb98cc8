/**
 * Every `$ kubectl …` session of docs/kubectl.md is what the real kubectl prints against Allot: the
 * page's console blocks are replayed in order against a fresh local server, and compared with
 * timestamps, uids and ages masked. `UPDATE_DOCS=1 npx vitest run test/kubectl/docs.test.ts` writes the
 * real output into the page instead.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startTestAllot } from '../helpers/allot.ts';
import { haveKubectl, kubectlFor, requireKubectl, type RunningKubectl } from './support.ts';
import { consoleSessions, maskRunVariance, rewriteSessions } from '../helpers/doc-sessions.ts';

requireKubectl('test/kubectl/docs.test.ts');

const FILE = 'docs/kubectl.md';
const PROMPT = '$ kubectl ';

/** A command line's words, as a shell splits them: single quotes keep spaces and braces, and go. */
function words(line: string): string[] {
  const found: string[] = [];
  let word: string | undefined;
  let quoted = false;
  for (const char of line) {
    if (char === "'") {
      quoted = !quoted;
      word ??= '';
    } else if (char === ' ' && !quoted) {
      if (word !== undefined) found.push(word);
      word = undefined;
    } else word = (word ?? '') + char;
  }
  if (word !== undefined) found.push(word);
  return found;
}

/** Console blocks with a `$ kubectl` command, and their output. */
const sessions = (lines: string[]) =>
  consoleSessions(lines, PROMPT, {
    takes: (prompts) => prompts.some((line) => line.startsWith(PROMPT)),
    argvOf: (line) => words(line).slice(2),
  });

/** What differs from run to run: timestamps, uids, ages in the AGE column. */
const mask = (text: string) => maskRunVariance(text).replace(/ {3}\d+[smhdy](\d+[smh])?$/gm, '   <age>');

describe.runIf(haveKubectl)('docs/kubectl.md shows what kubectl prints', () => {
  it('has sessions for the seed, tables, apply, validation, the Retain rebind, selectors, -A, watch, version', () => {
    const text = readFileSync(FILE, 'utf8');
    for (const command of [
      '$ kubectl get indexpools',
      "$ kubectl get claim leaf1-asn -o jsonpath='{.status.value}'",
      '$ kubectl get claims -l team=fabric',
      '$ kubectl get claims -A',
      '$ kubectl get claims -w --output-watch-events --request-timeout=8s &',
      '$ kubectl version',
      "$ kubectl get claim leaf1-asn -o jsonpath='{.status.allocationRef.name}'",
      '$ kubectl apply -f docs/examples/invalid.yaml',
      '$ kubectl delete claim tor9-vlan',
    ])
      expect(text).toContain(`\n${command}\n`);
  });

  it('replays every session', async () => {
    const lines = readFileSync(FILE, 'utf8').split('\n');
    const allot = await startTestAllot();
    const kubectl = await kubectlFor(allot.url);
    const replaced: string[][] = [];
    try {
      for (const session of sessions(lines)) {
        const block: string[] = [];
        // A command ending in ` &` runs on while the next ones do (a watch); what it prints is shown
        // after the block's last command, once it has ended.
        let background: RunningKubectl | undefined;
        for (const [index, command] of session.commands.entries()) {
          // A reader types slower than the local stream applies effects: wait as they would.
          await allot.stream?.drained();
          await allot.history?.drained();
          if (command.argv.at(-1) === '&') {
            background = kubectl.start(command.argv.slice(0, -1));
            // Its list printed: it watches from there on.
            for (const deadline = Date.now() + 20_000; background.stdout() === '' && Date.now() < deadline;)
              await new Promise((resolve) => setTimeout(resolve, 50));
            block.push(command.line);
            if (!process.env.UPDATE_DOCS) expect(command.expected, `${FILE}: ${command.line}`).toEqual([]);
            continue;
          }
          const result = await kubectl.run(command.argv);
          if (background && index === session.commands.length - 1) {
            await allot.history?.drained();
            const ended = await background.done;
            result.stdout += ended.stdout;
            result.stderr += ended.stderr;
            background = undefined;
          }
          const printed =
            `${result.stdout}${result.stdout && !result.stdout.endsWith('\n') ? '\n' : ''}${result.stderr}`
              .replace(/\n$/, '')
              .split('\n')
              .filter((line, i, all) => line !== '' || all.length > 1);
          if (!process.env.UPDATE_DOCS)
            expect(mask(printed.join('\n')), `${FILE}: ${command.line}`).toBe(
              mask(command.expected.join('\n')),
            );
          block.push(command.line, ...printed);
        }
        replaced.push(block);
      }
    } finally {
      await kubectl.close();
      await allot.close();
    }
    if (process.env.UPDATE_DOCS) rewriteSessions(FILE, lines, sessions(lines), replaced);
  });
});
