/**
 * The console sessions of a markdown page, as the docs-replay tests read them (test/cli/docs.test.ts for
 * `npx allot`, test/kubectl/docs.test.ts for kubectl): each ```console block that `takes` (given its
 * `$ ` lines), split into commands of `prompt` and the lines each is expected to print.
 */
import { writeFileSync } from 'node:fs';

export interface DocSession {
  /** Line index of the block's first line (after the fence). */
  start: number;
  end: number;
  commands: { line: string; argv: string[]; expected: string[] }[];
}

export function consoleSessions(
  lines: string[],
  prompt: string,
  options: { takes(prompts: string[]): boolean; argvOf(line: string): string[] },
): DocSession[] {
  const found: DocSession[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```console') continue;
    const end = lines.indexOf('```', i + 1);
    const body = lines.slice(i + 1, end);
    if (options.takes(body.filter((line) => line.startsWith('$ ')))) {
      const commands: DocSession['commands'] = [];
      for (const line of body) {
        if (line.startsWith(prompt)) commands.push({ line, argv: options.argvOf(line), expected: [] });
        else commands.at(-1)?.expected.push(line);
      }
      found.push({ start: i + 1, end, commands });
    }
    i = end;
  }
  return found;
}

/**
 * `UPDATE_DOCS=1`: writes `file` back with each session's block replaced by what was printed
 * (`replaced[b]` for `sessions[b]`, as the replay found them).
 */
export function rewriteSessions(
  file: string,
  lines: string[],
  sessions: readonly DocSession[],
  replaced: readonly string[][],
): void {
  for (let b = sessions.length - 1; b >= 0; b--)
    lines.splice(sessions[b]!.start, sessions[b]!.end - sessions[b]!.start, ...replaced[b]!);
  writeFileSync(file, lines.join('\n'));
}

/** What differs from run to run in any session: timestamps and uids. */
export function maskRunVariance(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z/g, '<time>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uid>');
}
