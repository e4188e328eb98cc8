/**
 * The package as npm would publish it (part of `npm run bench`; alone: `npx tsx bench/package.ts`):
 * `npm pack --dry-run --json` runs the same prepack build (bin/pack.ts) and reports the tarball's size
 * packed and unpacked, file by file. Target: at most 5 MB packed (issue 33). Writes
 * bench/package-results.json; docs/benchmark.md shows it (bench/package-report.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as prettier from 'prettier';

export const PACKED_BUDGET_BYTES = 5 * 1000 * 1000;

const root = fileURLToPath(new URL('../', import.meta.url));
const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--silent'], {
  cwd: root,
  maxBuffer: 64 << 20,
});
const [report] = JSON.parse(stdout) as {
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string; size: number }[];
}[];
/** Unpacked bytes by part of the package: the functions' bundles (with their source maps), the CLI, … */
const partOf = (path: string) =>
  /^dist\/functions\/[^/]+\/index\.mjs\.map$/.test(path)
    ? 'functions: source maps'
    : path.startsWith('dist/functions/')
      ? 'functions: bundles'
      : path.startsWith('dist/cli/')
        ? 'CLI (dist/cli)'
        : path.startsWith('dist/console/')
          ? 'console page (dist/console)'
          : /\.d\.ts$/.test(path)
            ? 'type declarations'
            : path.startsWith('dist/')
              ? 'constructs (dist/esm, dist/cjs)'
              : 'the rest (README, LICENSE, schemas, …)';
const parts: Record<string, number> = {};
for (const file of report!.files) parts[partOf(file.path)] = (parts[partOf(file.path)] ?? 0) + file.size;

const results = {
  version: JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version as string,
  packedBytes: report!.size,
  unpackedBytes: report!.unpackedSize,
  files: report!.entryCount,
  unpackedByPart: parts,
  budgetBytes: PACKED_BUDGET_BYTES,
  withinBudget: report!.size <= PACKED_BUDGET_BYTES,
};
const file = fileURLToPath(new URL('./package-results.json', import.meta.url));
writeFileSync(file, await prettier.format(JSON.stringify(results), { parser: 'json' }));
console.log(
  `package: ${(results.packedBytes / 1e6).toFixed(2)} MB packed (target ≤ ${PACKED_BUDGET_BYTES / 1e6} MB), ${(results.unpackedBytes / 1e6).toFixed(2)} MB unpacked, ${results.files} files`,
);
