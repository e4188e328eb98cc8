/**
 * The Lambda bundles as `cdk synth` builds them (the one test that bundles for real): each a minified ES
 * module within the budget, holding its own routes' operations and the SDK pieces it uses only, and
 * the api bundle run as Lambda runs it: in a fresh Node process with the function's environment, it
 * signs its DynamoDB calls with the credentials Lambda gives (a SigV4-checking stand-in for DynamoDB
 * answers them).
 */
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AllotService, type AllotFunctionName } from '../../lib/cloud/construct.ts';
import { BUNDLE_BUDGET_BYTES, FUNCTION_NAMES } from '../../lib/cloud/functions.ts';
import { httpEvent } from '../helpers/events.ts';
import {
  startVerifier,
  VERIFIER_CREDENTIALS,
  VERIFIER_REGION,
  type Verifier,
} from '../helpers/sigv4-verifier.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

interface Bundle {
  name: AllotFunctionName;
  file: string;
  code: string;
  bytes: number;
  /** The files it was built from (its source map's), relative to the repository. */
  sources: string[];
}

let bundles: Bundle[];

beforeAll(() => {
  const app = new App();
  const stack = new Stack(app, 'Test');
  const service = new AllotService(stack, 'Allot');
  const directory = app.synth().directory;
  const resources = Template.fromStack(stack).findResources('AWS::Lambda::Function');
  expect(Object.keys(resources)).toHaveLength(FUNCTION_NAMES.length);
  bundles = FUNCTION_NAMES.map((name) => {
    const logicalId = stack.getLogicalId(service.functions[name].node.defaultChild as never);
    const key = resources[logicalId]!.Properties.Code.S3Key as string;
    const asset = join(directory, `asset.${key.replace(/\.zip$/, '')}`);
    const file = join(asset, 'index.mjs');
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    const sources = map.sources.map((source) => relative(root, resolve(asset, source)));
    return { name, file, code: readFileSync(file, 'utf8'), bytes: statSync(file).size, sources };
  });
}, 120_000);

const withSource = (test: (source: string) => boolean) =>
  bundles.filter(({ sources }) => sources.some(test)).map(({ name }) => name);
const withPackage = (name: string) => withSource((source) => source.includes(`node_modules/${name}/`));

describe('the bundles', () => {
  it('are minified ES modules exporting the handler, each with a source map', () => {
    for (const { code, sources } of bundles) {
      expect(code.startsWith('import { createRequire }')).toBe(true);
      expect(code).toMatch(/export\s*\{[^}]*\bhandler\b/);
      expect(sources.length).toBeGreaterThan(0);
    }
  });

  it(`are each within the budget of ${BUNDLE_BUDGET_BYTES / 1000} KB`, () => {
    console.log(
      `[bundles] bytes: ${JSON.stringify(Object.fromEntries(bundles.map((b) => [b.name, b.bytes])))}`,
    );
    for (const { name, bytes } of bundles)
      expect(bytes, `the ${name} function's bundle, in bytes`).toBeLessThanOrEqual(BUNDLE_BUDGET_BYTES);
  });

  it('hold each function’s own routes’ operations only, and no console', () => {
    for (const { name, sources } of bundles) {
      // Operation tables: every file of lib/http/dispatch/ but the dispatch itself.
      const dispatches = sources.filter(
        (source) => source.startsWith('lib/http/dispatch/') && source !== 'lib/http/dispatch/dispatch.ts',
      );
      expect({ name, dispatches }).toEqual({
        name,
        // The stream, the history and the custom resource's provider serve no HTTP route.
        dispatches: ['stream', 'history', 'claim-resource'].includes(name)
          ? []
          : [`lib/http/dispatch/${name}.ts`],
      });
    }
    expect(withSource((source) => source.startsWith('lib/console/'))).toEqual([]);
    expect(withSource((source) => source === 'lib/http/openapi/openapi.ts')).toEqual(['api']);
  });

  it('hold EventBridge where events are sent, Metrics where metrics are recorded, and no batch processor (the stream function works on a batch as a whole)', () => {
    expect(withPackage('@aws-sdk/client-eventbridge')).toEqual(['stream']);
    expect(withPackage('@aws-lambda-powertools/metrics')).toEqual(['claim', 'stream', 'repair']);
    expect(withPackage('@aws-lambda-powertools/batch')).toEqual([]);
  });

  it('hold the credential links that apply in Lambda, not the SDK’s whole default chain', () => {
    const all = [...FUNCTION_NAMES];
    expect(withSource((source) => source === 'functions/lambda-credentials.ts')).toEqual(all);
    expect(withPackage('@aws-sdk/credential-provider-env')).toEqual(all);
    for (const dropped of ['credential-provider-node', 'credential-provider-sso', 'credential-provider-ini'])
      expect(withPackage(`@aws-sdk/${dropped}`)).toEqual([]);
    expect(withPackage('@aws-sdk/nested-clients')).toEqual([]);
  });
});

describe('each bundle', () => {
  it('loads in a fresh Node process with nothing but its entry, and exports its handler', async () => {
    for (const { name, file } of bundles) {
      const script = `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(typeof m.handler);`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        env: { PATH: process.env.PATH ?? '', AWS_REGION: VERIFIER_REGION },
        timeout: 60_000,
      });
      expect({ name, handler: stdout.trim() }).toEqual({ name, handler: 'function' });
    }
  });
});

describe('the api bundle, run as Lambda runs it', () => {
  let dynamodb: Verifier;
  const list = httpEvent('GET', '/v1/namespaces/default/indexpools');

  beforeAll(async () => {
    dynamodb = await startVerifier({
      service: 'dynamodb',
      answer: () => ({ status: 200, body: { Items: [], Count: 0, ScannedCount: 0 } }),
    });
  });
  afterAll(() => dynamodb.close());

  /** Imports the bundle in a fresh process with `env` (and nothing else) and calls its handler once. */
  async function invoke(env: Record<string, string>): Promise<{ statusCode: number; body: string }> {
    const api = bundles.find(({ name }) => name === 'api')!;
    const script = `
      const { handler } = await import(${JSON.stringify(pathToFileURL(api.file).href)});
      const context = { functionName: 'allot-api', awsRequestId: 'r1', getRemainingTimeInMillis: () => 10000 };
      console.log(JSON.stringify(await handler(JSON.parse(process.argv[1]), context)));`;
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', script, JSON.stringify(list)],
      {
        env: {
          PATH: process.env.PATH ?? '',
          AWS_REGION: VERIFIER_REGION,
          TABLE_NAME: 'allot',
          AWS_ENDPOINT_URL_DYNAMODB: dynamodb.url,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          ...env,
        },
        timeout: 60_000,
      },
    );
    return JSON.parse(stdout.trim().split('\n').pop()!);
  }

  const signedQueries = () =>
    dynamodb.verified.filter(({ headers }) => headers['x-amz-target'] === 'DynamoDB_20120810.Query').length;

  it('signs with the role credentials Lambda puts in the environment', async () => {
    const before = signedQueries();
    const answer = await invoke({
      AWS_ACCESS_KEY_ID: VERIFIER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: VERIFIER_CREDENTIALS.secretAccessKey,
      AWS_SESSION_TOKEN: VERIFIER_CREDENTIALS.sessionToken,
    });
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ items: [] });
    expect(signedQueries()).toBeGreaterThan(before);
    expect(dynamodb.rejected).toEqual([]);
  });

  it('signs with credentials from a container credentials endpoint where the environment has none', async () => {
    const endpoint = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          AccessKeyId: VERIFIER_CREDENTIALS.accessKeyId,
          SecretAccessKey: VERIFIER_CREDENTIALS.secretAccessKey,
          Token: VERIFIER_CREDENTIALS.sessionToken,
          Expiration: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      );
    });
    await new Promise<void>((done) => endpoint.listen(0, '127.0.0.1', () => done()));
    try {
      const { port } = endpoint.address() as AddressInfo;
      const before = signedQueries();
      const answer = await invoke({
        AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${port}/credentials`,
      });
      expect(answer.statusCode).toBe(200);
      expect(signedQueries()).toBeGreaterThan(before);
      expect(dynamodb.rejected).toEqual([]);
    } finally {
      await new Promise<void>((done) => endpoint.close(() => done()));
    }
  });

  it('answers a 500 Status and calls nothing without credentials', async () => {
    const arrived = dynamodb.verified.length + dynamodb.rejected.length;
    const answer = await invoke({});
    expect(answer.statusCode).toBe(500);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
    expect(dynamodb.verified.length + dynamodb.rejected.length).toBe(arrived);
  });
});
