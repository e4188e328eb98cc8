/**
 * Scenario 6: each Lambda bundle as the CDK app builds it (`cdk synth`, local esbuild), its size, and its
 * cold-start module load time: the import of the built bundle in a fresh Node process.
 *
 * `npx tsx bench/bundles.ts` measures the sizes alone (one synth, no cold loads) and fails when a bundle
 * is over the budget (BUNDLE_BUDGET_BYTES).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { BUNDLE_BUDGET_BYTES, FUNCTION_NAMES } from '../lib/cloud/functions.ts';
import { constructIdOf } from '../lib/cloud/lambda.ts';
import { median, round } from './measure.ts';

const run = promisify(execFile);

export const COLD_LOADS = 10;

export interface BundleResult {
  name: string;
  logicalId: string;
  bytes: number;
  /** Median of the loads with the function's environment as deployed (NODE_OPTIONS=--enable-source-maps). */
  coldLoadMs: number;
  coldLoadSamplesMs: number[];
  /** Median without the deployed NODE_OPTIONS (no source-map support). */
  coldLoadWithoutSourceMapsMs: number;
  sourceMapBytes: number;
}

interface TemplateResource {
  Type: string;
  Metadata?: Record<string, unknown>;
  Properties?: { Handler?: string; Environment?: { Variables?: Record<string, unknown> } };
}

/** Synthesises the app into a temporary folder; returns the folder and how long it took. */
async function synth(root: string): Promise<{ dir: string; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'allot-bench-cdk-'));
  const started = performance.now();
  await run('npx', ['cdk', 'synth', '--quiet', '-o', dir], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 180_000,
  });
  return { dir, seconds: (performance.now() - started) / 1000 };
}

/** One import of the bundle in a fresh process; the time the import took, as that process measured it. */
async function coldLoad(file: string, env: Record<string, string>): Promise<number> {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(performance.now() - t);`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  });
  const last = stdout.trim().split('\n').pop() ?? '';
  const ms = Number(last);
  if (!Number.isFinite(ms)) throw new Error(`cold load of ${file} printed ${JSON.stringify(stdout)}`);
  return ms;
}

/** The function a logical id is of (`AllotClaimResourceFunction0EBCEF04` → `claim-resource`). */
function nameOf(logicalId: string, handler: string | undefined): string {
  const name = FUNCTION_NAMES.find((candidate) =>
    new RegExp(`${constructIdOf(candidate)}Function[0-9A-F]{8}$`).test(logicalId),
  );
  return name ?? handler ?? logicalId;
}

/** The functions a synth wrote: each one's name, logical id, template resource and bundle file. */
function functionsOf(dir: string) {
  const templateFile = readdirSync(dir).find((file) => file.endsWith('.template.json'));
  if (!templateFile) throw new Error(`cdk synth wrote no template into ${dir}`);
  const template = JSON.parse(readFileSync(join(dir, templateFile), 'utf8')) as {
    Resources: Record<string, TemplateResource>;
  };
  return Object.entries(template.Resources)
    .flatMap(([logicalId, resource]) => {
      const assetPath = resource.Metadata?.['aws:asset:path'];
      if (resource.Type !== 'AWS::Lambda::Function' || typeof assetPath !== 'string') return [];
      const name = nameOf(logicalId, resource.Properties?.Handler);
      return [{ name, logicalId, resource, file: join(dir, assetPath, 'index.mjs') }];
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

export async function measureBundles(
  root: string,
): Promise<{ bundles: BundleResult[]; synthSeconds: number }> {
  const { dir, seconds } = await synth(root);
  try {
    const bundles: BundleResult[] = [];
    for (const { name, logicalId, resource, file } of functionsOf(dir)) {
      // The deployed environment, with plain values for the references CloudFormation resolves.
      const deployed: Record<string, string> = { AWS_REGION: 'us-east-1' };
      for (const [key, value] of Object.entries(resource.Properties?.Environment?.Variables ?? {}))
        deployed[key] = typeof value === 'string' ? value : 'allot-bench';
      const plain = Object.fromEntries(Object.entries(deployed).filter(([key]) => key !== 'NODE_OPTIONS'));
      const samples: number[] = [];
      const plainSamples: number[] = [];
      for (let i = 0; i < COLD_LOADS; i++) {
        samples.push(await coldLoad(file, deployed));
        plainSamples.push(await coldLoad(file, plain));
      }
      const mapFile = `${file}.map`;
      bundles.push({
        name,
        logicalId,
        bytes: statSync(file).size,
        coldLoadMs: round(median(samples), 1),
        coldLoadSamplesMs: samples.map((ms) => round(ms, 1)),
        coldLoadWithoutSourceMapsMs: round(median(plainSamples), 1),
        sourceMapBytes: safeSize(mapFile),
      });
    }
    return { bundles, synthSeconds: round(seconds, 1) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each bundle's size, from one synth, printed; throws when one is over the budget. */
export async function checkBundleSizes(root: string): Promise<{ name: string; bytes: number }[]> {
  const { dir } = await synth(root);
  try {
    const sizes = functionsOf(dir).map(({ name, file }) => ({ name, bytes: statSync(file).size }));
    for (const { name, bytes } of sizes) console.log(`${name.padEnd(15)} ${(bytes / 1000).toFixed(1)} KB`);
    const over = sizes.filter(({ bytes }) => bytes > BUNDLE_BUDGET_BYTES);
    if (over.length > 0) {
      const list = over.map(({ name, bytes }) => `${name} ${bytes} bytes`).join(', ');
      throw new Error(`over the ${BUNDLE_BUDGET_BYTES} bytes budget: ${list}`);
    }
    return sizes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await checkBundleSizes(fileURLToPath(new URL('..', import.meta.url)));
}

function safeSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
