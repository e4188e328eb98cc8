/**
 * The package as a CDK app gets it: `npm pack` of this clone (its prepack build, bin/pack.ts), installed
 * offline into a scratch app with nothing but its peers (aws-cdk-lib and constructs, linked from this
 * clone's node_modules, as are the app's own tools, so no registry or cache is needed), and one app
 * (fixtures/network-app.ts: the service, a VPC from `AllotIpAddresses`, a Transit Gateway whose ASN is an
 * `AllotClaim`) synthesized by the real CDK CLI four ways: plain JavaScript by `require` and by `import`,
 * TypeScript through ts-node (the app `cdk init` made before 2.1100) and through tsc and tsx (the one
 * `cdk init app --language typescript` of aws-cdk 2.1148.1 makes), each with that init's recommended
 * feature flags. The templates pass cfn-lint with no errors (a tier: skipped without cfn-lint, failed
 * under CI=true).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../lib/cloud/functions.ts';
import { packInto } from '../helpers/pack.ts';
import { requireCommand } from '../helpers/tools.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('fixtures/network-app.ts', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'allot-consumer-'));
const linked = (name: string) => `file:${join(root, 'node_modules', name)}`;
const flags = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
const env = {
  ...process.env,
  CDK_DISABLE_VERSION_CHECK: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  // Whatever account the machine has, the apps are environment-agnostic.
  CDK_DEFAULT_ACCOUNT: '',
  CDK_DEFAULT_REGION: '',
};

/** The fixture as plain CommonJS: its `import` lines as `require`s (it has no type annotations). */
const asCommonJs = (source: string) =>
  source
    .replace(/^import \{ (.*) \} from '(.*)';$/gm, "const { $1 } = require('$2');")
    .replace(/^import \* as (\w+) from '(.*)';$/gm, "const $1 = require('$2');");

/** The tsconfig of the TypeScript app `cdk init` made when it ran apps with ts-node (CommonJS, node10). */
const TS_NODE_TSCONFIG = {
  compilerOptions: {
    target: 'ES2020',
    module: 'commonjs',
    lib: ['es2020', 'dom'],
    declaration: true,
    strict: true,
    noImplicitAny: true,
    strictNullChecks: true,
    noImplicitThis: true,
    alwaysStrict: true,
    noImplicitReturns: true,
    inlineSourceMap: true,
    inlineSources: true,
    experimentalDecorators: true,
    strictPropertyInitialization: false,
    typeRoots: ['../node_modules/@types'],
  },
  exclude: ['node_modules', 'cdk.out'],
};

/** `cdk init app --language typescript` of aws-cdk 2.1148.1 (NodeNext in a CommonJS package; no jest here). */
const TSX_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['es2022'],
    declaration: true,
    strict: true,
    noImplicitAny: true,
    strictNullChecks: true,
    noImplicitThis: true,
    alwaysStrict: true,
    noImplicitReturns: true,
    inlineSourceMap: true,
    inlineSources: true,
    experimentalDecorators: true,
    strictPropertyInitialization: false,
    skipLibCheck: true,
    typeRoots: ['../node_modules/@types'],
    noEmit: true,
    isolatedModules: true,
    types: ['node'],
  },
  exclude: ['node_modules', 'cdk.out'],
};

interface Variant {
  name: string;
  /** Files of the app's folder. */
  files: Record<string, string>;
  /** cdk.json's `app`. */
  app: string;
}

const source = readFileSync(fixture, 'utf8');
const VARIANTS: Variant[] = [
  { name: 'JavaScript, require', files: { 'app.js': asCommonJs(source) }, app: 'node app.js' },
  { name: 'JavaScript, import', files: { 'app.mjs': source }, app: 'node app.mjs' },
  {
    name: 'TypeScript, ts-node',
    files: { 'bin/app.ts': source, 'tsconfig.json': JSON.stringify(TS_NODE_TSCONFIG) },
    app: 'npx ts-node --prefer-ts-exts bin/app.ts',
  },
  {
    name: 'TypeScript, tsc and tsx',
    files: { 'bin/app.ts': source, 'tsconfig.json': JSON.stringify(TSX_TSCONFIG) },
    app: 'npx tsc && npx tsx bin/app.ts',
  },
];
const folderOf = (variant: Variant) => join(scratch, variant.name.replace(/[^a-z]+/gi, '-').toLowerCase());

let tarball: string;
const synthesized = new Map<string, { outdir: string; stderr: string }>();

beforeAll(async () => {
  tarball = await packInto(scratch, env);
  writeFileSync(
    join(scratch, 'package.json'),
    JSON.stringify({
      name: 'network-app',
      version: '0.0.0',
      private: true,
      dependencies: {
        allot: `file:${tarball}`,
        'aws-cdk-lib': linked('aws-cdk-lib'),
        constructs: linked('constructs'),
      },
      devDependencies: Object.fromEntries(
        ['aws-cdk', 'typescript', 'ts-node', 'tsx', '@types/node'].map((name) => [name, linked(name)]),
      ),
    }),
  );
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: scratch,
    env,
  });
  for (const variant of VARIANTS) {
    const folder = folderOf(variant);
    for (const [file, text] of Object.entries({
      ...variant.files,
      'cdk.json': JSON.stringify({ app: variant.app, context: flags }),
    })) {
      mkdirSync(join(folder, file, '..'), { recursive: true });
      writeFileSync(join(folder, file), text);
    }
  }
}, 900_000); // a pack bundles every function and writes the declarations: a minute alone, more when busy

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const installed = () => join(scratch, 'node_modules', 'allot');
const template = (variant: Variant, stack: string) =>
  JSON.parse(readFileSync(join(synthesized.get(variant.name)!.outdir, `${stack}.template.json`), 'utf8'));

describe('the package', () => {
  it('installs from the tarball offline, with nothing but its peers, and carries no source', () => {
    expect(lstatSync(installed()).isDirectory()).toBe(true);
    const manifest = JSON.parse(readFileSync(join(installed(), 'package.json'), 'utf8'));
    expect(manifest.dependencies).toBeUndefined();
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    for (const entry of ['dist/esm/index.js', 'dist/cjs/index.js', 'dist/esm/types/lib/cloud/index.d.ts'])
      expect(existsSync(join(installed(), entry)), entry).toBe(true);
    for (const name of FUNCTION_NAMES)
      expect(existsSync(join(installed(), 'dist', 'functions', name, 'index.mjs')), name).toBe(true);
    for (const absent of ['lib', 'functions', 'test', 'dist/esm/types/lib/cloud/construct.ts'])
      expect(existsSync(join(installed(), absent)), absent).toBe(false);
  });

  it.each(VARIANTS.map((variant) => [variant.name, variant] as const))(
    'synthesizes as %s with the real CDK CLI, printing no feature-flag warning',
    async (_, variant) => {
      const outdir = join(folderOf(variant), 'cdk.out');
      const { stderr } = await run(
        join(scratch, 'node_modules', '.bin', 'cdk'),
        ['synth', '--quiet', '--no-notices', '-o', outdir],
        { cwd: folderOf(variant), env, maxBuffer: 64 << 20 },
      );
      synthesized.set(variant.name, { outdir, stderr });
      expect(stderr).not.toMatch(/feature flags? (are|is) not configured/i);
      expect(existsSync(join(outdir, 'Network.template.json'))).toBe(true);
    },
    600_000,
  );

  it('gives the same templates whichever way the app imports it', () => {
    for (const stack of ['Platform', 'Network'])
      for (const variant of VARIANTS.slice(1))
        expect(template(variant, stack)).toEqual(template(VARIANTS[0]!, stack));
  });

  it('gives the VPC its CIDR from a claim, its subnets by Fn::Cidr, and the Transit Gateway its ASN from a claim', () => {
    const resources = Object.entries<any>(template(VARIANTS[0]!, 'Network').Resources);
    const of = (type: string) => resources.filter(([, resource]) => resource.Type === type);
    const claims = of('Custom::AllotClaim');
    expect(claims.map(([, claim]) => claim.Properties.Spec)).toEqual(
      expect.arrayContaining([
        { poolRef: { kind: 'IPPrefixPool', name: 'vpc-cidrs' }, prefixLength: 20 },
        { poolRef: { kind: 'IndexPool', name: 'private-asns' } },
      ]),
    );
    const [vpcClaimId] = claims.find(([, claim]) => claim.Properties.Spec.poolRef.kind === 'IPPrefixPool')!;
    const [asnClaimId] = claims.find(([, claim]) => claim.Properties.Spec.poolRef.kind === 'IndexPool')!;
    const [vpcId, vpc] = of('AWS::EC2::VPC')[0]!;
    expect(vpc.Properties.CidrBlock).toEqual({ 'Fn::GetAtt': [vpcClaimId, 'Value'] });
    expect(of('AWS::EC2::Subnet')).toHaveLength(4);
    for (const [, subnet] of of('AWS::EC2::Subnet'))
      expect(JSON.stringify(subnet.Properties.CidrBlock)).toContain(
        // Four /22s of the /20, as ec2.IpAddresses.cidr lays them out (no defaultSubnetIpv4NetmaskLength).
        JSON.stringify({ 'Fn::Cidr': [{ 'Fn::GetAtt': [vpcId, 'CidrBlock'] }, 4, '10'] }),
      );
    const [, tgw] = of('AWS::EC2::TransitGateway')[0]!;
    expect(tgw.Properties.AmazonSideAsn).toEqual({ 'Fn::GetAtt': [asnClaimId, 'Value'] });
    // The claims take the service's token from the other stack (under cdk init's flags, by
    // Fn::GetStackOutput: @aws-cdk/core:defaultCrossStackReferences; without them, Fn::ImportValue).
    for (const [, claim] of claims)
      expect(Object.keys(claim.Properties.ServiceToken)).toEqual(['Fn::GetStackOutput']);
  });

  it('deploys the function bundles the package carries, byte for byte', () => {
    const { outdir } = synthesized.get(VARIANTS[0]!.name)!;
    const resources = Object.values<any>(template(VARIANTS[0]!, 'Platform').Resources);
    const functions = resources.filter((resource) => resource.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(FUNCTION_NAMES.length);
    const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    const deployed = functions
      .map((fn) => sha(join(outdir, fn.Metadata['aws:asset:path'], 'index.mjs')))
      .sort();
    const carried = FUNCTION_NAMES.map((name) =>
      sha(join(installed(), 'dist', 'functions', name, 'index.mjs')),
    ).sort();
    expect(deployed).toEqual(carried);
  });

  it('lets the TypeScript apps’ type checks see its declarations (a wrong prop fails both)', async () => {
    for (const variant of VARIANTS.filter(({ name }) => name.startsWith('TypeScript'))) {
      const folder = folderOf(variant);
      const wrong = join(folder, 'bin', 'wrong.ts');
      cpSync(join(folder, 'bin', 'app.ts'), wrong);
      writeFileSync(
        wrong,
        readFileSync(wrong, 'utf8').replace(
          "poolRef: { kind: 'IndexPool', name: 'private-asns' },",
          "poolRef: { kind: 'IndexPool', name: 'private-asns' }, prefixLength: 'long',",
        ),
      );
      const checked = await run(join(scratch, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', '.'], {
        cwd: folder,
      }).then(
        () => ({ stdout: '' }),
        (error: { stdout: string }) => error,
      );
      rmSync(wrong);
      // AllotClaimProps.prefixLength is a number: the package's declarations say so.
      expect(checked.stdout, variant.name).toMatch(
        /bin\/wrong\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/,
      );
      expect(checked.stdout, variant.name).not.toMatch(/bin\/app\.ts/);
    }
  }, 300_000);
});

describe('the app', () => {
  it('is the one docs/stacks.md shows', () => {
    const page = readFileSync(join(root, 'docs', 'stacks.md'), 'utf8');
    for (const line of source.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('//')))
      expect(page).toContain(line);
  });
});

describe('cfn-lint', () => {
  if (!requireCommand('cfn-lint of the package’s templates', 'cfn-lint')) return;

  /** This repository's own stack (bin/app.ts) as `cdk synth` makes it: cdk.json's flags; not bundled. */
  const ownOutdir = join(scratch, 'allot-stack');
  beforeAll(async () => {
    await run(join(root, 'node_modules', '.bin', 'tsx'), ['bin/app.ts'], {
      cwd: root,
      env: {
        ...env,
        CDK_OUTDIR: ownOutdir,
        CDK_CONTEXT_JSON: JSON.stringify({ ...flags, 'aws:cdk:bundling-stacks': [] }),
      },
    });
  }, 300_000);

  const appTemplate = (stack: string) => () =>
    join(synthesized.get(VARIANTS[0]!.name)!.outdir, `${stack}.template.json`);
  it.each([
    ['the app’s Platform', appTemplate('Platform')],
    ['the app’s Network', appTemplate('Network')],
    ['the repository’s AllotStack', () => join(ownOutdir, 'AllotStack.template.json')],
  ])(
    'finds no error in %s template',
    async (_, path) => {
      // Exit status bits: 2 errors, 4 warnings, 8 informational; only errors fail.
      const { code, stdout } = await run('cfn-lint', ['--format', 'parseable', '--', path()]).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
      const errors = stdout.split('\n').filter((line) => /:E\d{4}:/.test(line));
      expect(errors).toEqual([]);
      expect(code & 2).toBe(0);
    },
    120_000,
  );
});
