/**
 * A fresh CDK app, as a team writes it (README, "Use it from your CDK app"): it imports the construct by the
 * package's name, and `cdk synth` needs no AWS account, network or Docker. Run as its own process, the way
 * the CDK CLI runs an app, with `allot` mapped to the source (tsconfig.json's `paths`, which tsx reads:
 * the package's entry points are built only by `npm pack`, which test/package/consumer.test.ts installs
 * and runs); bundling is skipped (bundles.test.ts bundles for real).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../lib/cloud/functions.ts';

const root = new URL('../../', import.meta.url);
const appFile = new URL('fixtures/team-app.ts', import.meta.url);
const outDir = mkdtempSync(join(tmpdir(), 'allot-team-app-'));

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('a team CDK app using the construct', () => {
  it('synthesizes offline into a stack holding the whole service', async () => {
    const tsx = join(root.pathname, 'node_modules', '.bin', 'tsx');
    await promisify(execFile)(tsx, [appFile.pathname], {
      cwd: root.pathname,
      env: {
        ...process.env,
        CDK_OUTDIR: outDir,
        CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    });
    const template = JSON.parse(readFileSync(join(outDir, 'Networking.template.json'), 'utf8'));
    const types = Object.values(template.Resources).map((resource: any) => resource.Type);
    for (const type of [
      'AWS::DynamoDB::GlobalTable',
      'AWS::ApiGatewayV2::Api',
      'AWS::Lambda::EventSourceMapping',
      'AWS::Events::EventBus',
      'AWS::Events::Rule',
      'AWS::CloudWatch::Dashboard',
      'AWS::SNS::Topic',
    ]) {
      expect(types).toContain(type);
    }
    expect(types.filter((type) => type === 'AWS::Lambda::Function')).toHaveLength(FUNCTION_NAMES.length);
    expect(Object.keys(template.Outputs)).toEqual(expect.arrayContaining(['AllotUrl', 'AllotBus']));
  }, 120_000); // a process of its own loading aws-cdk-lib: seconds alone, much longer on a busy machine

  it('is the app the README shows', () => {
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    const code = readFileSync(appFile, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('//'));
    for (const line of code) expect(readme).toContain(line);
  });
});
