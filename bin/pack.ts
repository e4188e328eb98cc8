/**
 * The package a CDK app installs, built by `npm pack` (the `prepack` script; `postpack` runs this with
 * `--clean` and removes it again, so the clone never runs stale builds):
 *
 * - `dist/esm/`, `dist/cjs/`: the entry points (`allot`, `allot/events`, `allot/invocation`) bundled from
 *   lib/ with esbuild, as ES modules and as CommonJS (`import` and `require` alike), with the type
 *   declarations tsc writes for them. aws-cdk-lib and constructs are not bundled: they are the app's own
 *   (peer dependencies), so its constructs and ours are one library.
 * - `dist/cli/allot.js`: the CLI (bin/allot.ts) bundled with everything it imports into one ES module
 *   for plain Node 20, and `dist/console/`: the console's page and script that `allot ui` serves, built
 *   here, so the installed package runs `allot` with no dependency, esbuild or TypeScript
 *   (docs/architecture.md, "What the package depends on").
 * - `dist/functions/<name>/`: each function's bundle exactly as `cdk synth` of this clone makes it (the
 *   NodejsFunction bundling of lib/cloud/lambda.ts, the one test/cdk/bundles.test.ts checks). The built
 *   construct deploys these as they are (`ALLOT_PACKED_BUNDLES`): an app that installed the package
 *   synthesizes without esbuild, TypeScript, Docker or a network, and deploys the bytes tested here.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { build, type BuildOptions } from 'esbuild';
import { AllotService } from '../lib/cloud/construct.ts';
import { FUNCTION_NAMES } from '../lib/cloud/functions.ts';
import { consoleAssets, PACKED_CONSOLE_FILES } from '../lib/console/serve.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const dist = join(root, 'dist');

/** The package's entry points: export name → source. */
export const ENTRY_POINTS = {
  index: 'lib/cloud/index.ts',
  events: 'lib/domain/events.ts',
  invocation: 'lib/service/requests/invocation.ts',
};

/** Each function's bundle, from a synth of the service into a scratch folder. */
function packFunctions(): void {
  const outdir = mkdtempSync(join(tmpdir(), 'allot-pack-'));
  try {
    const app = new App({ outdir });
    const stack = new Stack(app, 'AllotPack');
    const service = new AllotService(stack, 'Allot');
    const template = app.synth().getStackByName(stack.stackName).template;
    for (const name of FUNCTION_NAMES) {
      const logicalId = stack.getLogicalId(service.functions[name].node.defaultChild as CfnElement);
      const key = String(template.Resources[logicalId].Properties.Code.S3Key).replace(/\.zip$/, '');
      const target = join(dist, 'functions', name);
      mkdirSync(target, { recursive: true });
      for (const file of ['index.mjs', 'index.mjs.map'])
        cpSync(join(outdir, `asset.${key}`, file), join(target, file));
      // The bundle's sources, as its source map names them (relative to the asset folder).
      const map = JSON.parse(readFileSync(join(target, 'index.mjs.map'), 'utf8')) as { sources: string[] };
      bundled(map.sources.map((source) => relative(root, resolve(outdir, `asset.${key}`, source))));
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

async function packEntryPoints(): Promise<void> {
  const common: BuildOptions = {
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    bundle: true,
    platform: 'node',
    target: 'node20',
    external: ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'],
    logLevel: 'warning',
    metafile: true,
  };
  // From dist/<format>/index.js, the bundles are in dist/functions/.
  const packed = { ALLOT_PACKED_BUNDLES: JSON.stringify('../functions/') };
  const esm = await build({ ...common, format: 'esm', outdir: join(dist, 'esm'), define: packed });
  bundled(Object.keys(esm.metafile!.inputs));
  await build({
    ...common,
    format: 'cjs',
    outdir: join(dist, 'cjs'),
    // CommonJS has no import.meta: the module's own URL, from its file name.
    define: { ...packed, 'import.meta.url': 'import_meta_url' },
    banner: { js: "const import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
  });
  // The package is "type": "module"; this folder's .js (and .d.ts) files are CommonJS.
  writeFileSync(join(dist, 'cjs', 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
}

/** `allot` as the package's `bin` runs it, and the console page it serves. */
async function packCli(): Promise<void> {
  const cli = await build({
    absWorkingDir: root,
    // Through an import, not as the entry: bin/allot.ts's own shebang runs tsx.
    stdin: { contents: "import './bin/allot.ts';", resolveDir: root, loader: 'ts', sourcefile: 'allot.ts' },
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outfile: join(dist, 'cli', 'allot.js'),
    // serve.ts imports esbuild only to build the console from source, which the packed CLI never does.
    external: ['esbuild'],
    define: { ALLOT_PACKED_CONSOLE: JSON.stringify('../console/') },
    banner: {
      // The bundled CommonJS modules (the AWS SDK's) require Node's built-ins.
      js: "#!/usr/bin/env node\nimport { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: 'warning',
    metafile: true,
  });
  bundled(Object.keys(cli.metafile.inputs));
  chmodSync(join(dist, 'cli', 'allot.js'), 0o755);
  const { html, script, inputs } = await consoleAssets();
  bundled(inputs ?? []);
  mkdirSync(join(dist, 'console'), { recursive: true });
  writeFileSync(join(dist, 'console', PACKED_CONSOLE_FILES.html), html);
  writeFileSync(join(dist, 'console', PACKED_CONSOLE_FILES.script), script);
}

/** The packages whose code the bundles hold: `node_modules/<name>` folders (a scope and a name). */
const bundledPackages = new Set<string>();
function bundled(inputs: readonly string[]): void {
  for (const input of inputs) {
    const found = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input.replaceAll('\\', '/'));
    if (found) bundledPackages.add(found[1]!);
  }
}

const LICENSE_FILE = /^(licen[cs]e|copying)(\.(md|txt))?$/i;

/**
 * dist/THIRD_PARTY_LICENSES.md: each package the bundles hold, with its license and the text of its
 * license file, as their licenses ask of copies (MIT, BSD and ISC: the notice with the code; Apache-2.0:
 * the license with it).
 */
function packLicenses(): void {
  const sections = [...bundledPackages]
    .map((folder) => {
      const manifest = JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
        license?: string;
      };
      const file = readdirSync(join(root, folder)).find((name) => LICENSE_FILE.test(name));
      const text = file
        ? readFileSync(join(root, folder, file), 'utf8').trim()
        : '(the package has no license file)';
      return { id: `${manifest.name}@${manifest.version}`, license: manifest.license ?? 'unstated', text };
    })
    .filter((section, i, all) => all.findIndex((other) => other.id === section.id) === i)
    .sort((a, b) => a.id.localeCompare(b.id));
  const body = sections.map(
    ({ id, license, text }) => `## ${id} (${license})\n\n\`\`\`text\n${text}\n\`\`\`\n`,
  );
  writeFileSync(
    join(dist, 'THIRD_PARTY_LICENSES.md'),
    `# Third-party licenses\n\nThe bundles in dist/ hold code of these ${sections.length} packages.\n\n${body.join('\n')}`,
  );
}

/** The type declarations of the entry points (and what they reference), for both formats. */
function packDeclarations(): void {
  const config = join(root, 'tsconfig.pack.json');
  writeFileSync(
    config,
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        rewriteRelativeImportExtensions: true,
        rootDir: '.',
        outDir: 'dist/esm/types',
      },
      files: Object.values(ENTRY_POINTS),
      include: [],
    }),
  );
  try {
    execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', config], { cwd: root, stdio: 'inherit' });
  } finally {
    rmSync(config, { force: true });
  }
  // tsc keeps the sources' `.ts` specifiers in declarations; a consumer resolves the `.js` ones.
  const types = join(dist, 'esm', 'types');
  for (const file of readdirSync(types, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.ts')) continue;
    const path = join(types, file);
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace(/((?:from\s+|import\()(['"])\.{1,2}\/[^'"]+)\.ts\2/g, '$1.js$2'),
    );
  }
  cpSync(types, join(dist, 'cjs', 'types'), { recursive: true });
}

rmSync(dist, { recursive: true, force: true });
if (!process.argv.includes('--clean')) {
  packFunctions();
  await packEntryPoints();
  await packCli();
  packDeclarations();
  packLicenses();
}
