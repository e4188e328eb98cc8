/**
 * The folders of lib/ draw the architecture (lib/README.md): imports go one way, down the layers, and
 * no module imports itself back through others. eslint enforces the direction on every lint; this test
 * proves the rule bites and walks the whole import graph for cycles and for files that outgrew a sitting.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Lowest first; cloud and cli stand side by side; local, the composition root, reads the cloud's definitions. */
// The console (a client of the HTTP API, served by cli's `allot ui` and by local) sits below both.
const RANK: Record<string, number> = {
  domain: 0,
  store: 1,
  service: 2,
  http: 3,
  console: 3.5,
  cloud: 4,
  cli: 4,
  local: 5,
};
const LAYERS = Object.keys(RANK);
const rank = (layer: string) => RANK[layer]!;

function libFiles(dir = join(root, 'lib')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? libFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [relative(root, join(dir, entry.name))]
        : [],
  );
}

/** The relative imports of a file, as repository paths (static, type-only and dynamic alike). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specifiers.map((specifier) => normalize(join(dirname(file), specifier)));
}

const layerOf = (file: string) => file.split('/')[1]!;

describe('the layout of lib/', () => {
  const files = libFiles();
  const graph = new Map(files.map((file) => [file, importsOf(file).filter((to) => to.startsWith('lib/'))]));

  it('puts every file of lib/ in a layer folder', () => {
    expect(files.length).toBeGreaterThan(30);
    for (const file of files) expect(LAYERS, file).toContain(layerOf(file));
  });

  it('imports only down the layers', () => {
    const against: string[] = [];
    for (const [from, tos] of graph)
      for (const to of tos)
        if (
          rank(layerOf(to)) > rank(layerOf(from)) ||
          (rank(layerOf(to)) === rank(layerOf(from)) && layerOf(to) !== layerOf(from))
        )
          against.push(`${from} → ${to}`);
    expect(against).toEqual([]);
  });

  it('has no import cycle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const to of graph.get(file) ?? []) visit(to, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it("has no cycle between a layer's folders, so each concern can be read before those that use it", () => {
    // A concern is a layer's sub-folder (lib/service/allocation/), or a file at the layer's top.
    const concernOf = (file: string) => file.split('/').slice(0, 3).join('/');
    const folders = new Map<string, Set<string>>();
    for (const [from, tos] of graph)
      for (const to of tos)
        if (layerOf(to) === layerOf(from) && concernOf(to) !== concernOf(from))
          folders.set(concernOf(from), (folders.get(concernOf(from)) ?? new Set()).add(concernOf(to)));
    expect(folders.get('lib/service/operations')).toContain('lib/service/allocation');
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (folder: string, path: string[]) => {
      if (state.get(folder) === 'done') return;
      if (state.get(folder) === 'open') return void cycles.push([...path, folder].join(' → '));
      state.set(folder, 'open');
      for (const to of folders.get(folder) ?? []) visit(to, [...path, folder]);
      state.set(folder, 'done');
    };
    for (const folder of folders.keys()) visit(folder, []);
    expect(cycles).toEqual([]);
  });

  it('keeps every file of lib/ readable in one sitting (at most 600 lines)', () => {
    const long = files.filter(
      (file) => readFileSync(join(root, file), 'utf8').trimEnd().split('\n').length > 600,
    );
    expect(long).toEqual([]);
  });

  it('keeps every top-level function of lib/ readable in a screen or two (at most 120 lines)', () => {
    const long: string[] = [];
    for (const file of files) {
      const lines = readFileSync(join(root, file), 'utf8').split('\n');
      lines.forEach((line, start) => {
        const name = line.match(/^(?:export )?(?:async )?function\*? ?(\w+)/)?.[1];
        if (!name) return;
        let end = start + 1;
        while (end < lines.length && !lines[end]!.startsWith('}')) end++;
        if (end - start > 120) long.push(`${file}: ${name}() runs ${end - start} lines`);
      });
    }
    expect(files.some((file) => file.endsWith('decide.ts'))).toBe(true);
    expect(long).toEqual([]);
  });

  it('has eslint refuse an import against the layer direction, and AWS in the domain', async () => {
    const eslint = new ESLint({ cwd: root });
    const lint = async (file: string, code: string) =>
      (await eslint.lintText(code, { filePath: join(root, file) }))[0]!.messages.map((m) => m.ruleId);
    expect(await lint('lib/domain/probe.ts', "export * from '../service/decide.ts';\n")).toContain(
      'no-restricted-imports',
    );
    expect(await lint('lib/store/probe.ts', "export * from '../service/context.ts';\n")).toContain(
      'no-restricted-imports',
    );
    expect(
      await lint('lib/service/operations/probe.ts', "export * from '../../http/routes.ts';\n"),
    ).toContain('no-restricted-imports');
    expect(await lint('lib/domain/probe.ts', "export * from '@aws-sdk/client-dynamodb';\n")).toContain(
      'no-restricted-imports',
    );
    // and lets the direction the layers go through
    expect(await lint('lib/service/probe.ts', "export * from '../store/keys.ts';\n")).toEqual([]);
  });
});
