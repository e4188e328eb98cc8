/** The package's row of docs/benchmark.md's generated section (bench/readme.ts), from bench/package-results.json. */
import { existsSync, readFileSync } from 'node:fs';

interface PackageResults {
  version: string;
  packedBytes: number;
  unpackedBytes: number;
  files: number;
  unpackedByPart: Record<string, number>;
  budgetBytes: number;
}

const file = new URL('./package-results.json', import.meta.url);
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;

export function packageSection(table: (header: string[], body: string[][]) => string): string[] {
  if (!existsSync(file)) return [];
  const results = JSON.parse(readFileSync(file, 'utf8')) as PackageResults;
  const parts = Object.entries(results.unpackedByPart).sort(([, a], [, b]) => b - a);
  return [
    `The package as npm publishes it (bench/package.ts: \`npm pack --dry-run\` of ${results.version}, the prepack build included; what it holds: docs/architecture.md, "What the package depends on"):`,
    '',
    table(
      ['figure', 'measured', 'target'],
      [
        ['tarball, packed', mb(results.packedBytes), `≤ ${mb(results.budgetBytes)}`],
        ['unpacked', `${mb(results.unpackedBytes)} in ${results.files} files`, ''],
        ...parts.map(([part, bytes]) => [`unpacked: ${part}`, mb(bytes), '']),
      ],
    ),
    '',
  ];
}
