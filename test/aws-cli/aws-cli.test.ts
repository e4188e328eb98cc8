/**
 * The real AWS CLI (`aws`, v1 on this image) against `npm start` (bin/server.ts, its own process, on a
 * port the OS picks): `aws lambda invoke` and `aws events put-events` drive a claim and a release, the
 * claim-resource function answers a CloudFormation request at its ResponseURL, and the CLI reports those
 * APIs' own errors. Without the CLI the suite skips with one line; under CI=true that fails.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_REQUESTED, RELEASE_REQUESTED } from '../../lib/domain/events.ts';
import { client, eventually, indexPool } from '../helpers/allot.ts';
import {
  cloudFormationRequest,
  startResponseListener,
  type ResponseListener,
} from '../helpers/cloudformation.ts';
import { requireCommand } from '../helpers/tools.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('the AWS CLI against npm start', () => {
  if (!requireCommand('the AWS CLI against npm start', 'aws')) return;

  const scratch = mkdtempSync(join(tmpdir(), 'allot-aws-cli-'));
  let server: ChildProcess;
  let url: string;
  let responses: ResponseListener;
  let api: ReturnType<typeof client>;

  /** Runs `aws <args> --endpoint-url <server>` with test credentials and no profile of this machine's. */
  function aws(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        'aws',
        [...args, '--endpoint-url', url, '--output', 'json'],
        {
          env: {
            ...process.env,
            AWS_ACCESS_KEY_ID: 'test',
            AWS_SECRET_ACCESS_KEY: 'test',
            AWS_DEFAULT_REGION: 'eu-west-1',
            AWS_CONFIG_FILE: join(scratch, 'none'),
            AWS_SHARED_CREDENTIALS_FILE: join(scratch, 'none'),
            AWS_EC2_METADATA_DISABLED: 'true',
          },
          timeout: 60_000,
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  beforeAll(async () => {
    responses = await startResponseListener();
    server = spawn(join(root, 'node_modules', '.bin', 'tsx'), ['bin/server.ts'], {
      cwd: root,
      env: { ...process.env, PORT: '0', ALLOT_DATA_DIR: ':memory:' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      server.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
        if (found) resolve(found[1]!);
      });
      server.once('exit', (code) =>
        reject(new Error(`npm start exited (${code}) before listening: ${seen}`)),
      );
    });
    api = client(url);
    expect((await api.post('indexpools', indexPool('vlans', ['100..199']))).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await responses?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const poolRef = { kind: 'IndexPool', name: 'vlans' };

  it('aws lambda invoke claims and releases', async () => {
    const out = join(scratch, 'claim.json');
    const claim = { operation: 'claim', namespace: 'default', name: 'web-vlan', spec: { poolRef } };
    const invoked = await aws(
      'lambda',
      'invoke',
      '--function-name',
      'claim',
      '--payload',
      JSON.stringify(claim),
      out,
    );
    expect(invoked.code, invoked.stderr).toBe(0);
    expect(JSON.parse(invoked.stdout)).toEqual({ StatusCode: 200, ExecutedVersion: '$LATEST' });
    const answer = JSON.parse(readFileSync(out, 'utf8'));
    expect(answer).toMatchObject({ kind: 'Claim', metadata: { name: 'web-vlan' }, status: { value: '100' } });
    expect((await api.get('claims/web-vlan')).body.status.value).toBe('100');

    const release = { operation: 'release', namespace: 'default', name: 'web-vlan' };
    const released = await aws(
      'lambda',
      'invoke',
      '--function-name',
      'release',
      '--payload',
      JSON.stringify(release),
      out,
    );
    expect(released.code, released.stderr).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({
      kind: 'Claim',
      metadata: { name: 'web-vlan' },
    });
    expect((await api.get('claims/web-vlan')).status).toBe(404);
  });

  it('aws events put-events claims and releases, by the bus’s rules', async () => {
    const entries = (detailType: string, detail: unknown) =>
      JSON.stringify([
        {
          EventBusName: 'allot',
          Source: 'team.provisioning',
          DetailType: detailType,
          Detail: JSON.stringify(detail),
        },
      ]);
    const put = await aws(
      'events',
      'put-events',
      '--entries',
      entries(CLAIM_REQUESTED, { namespace: 'default', name: 'bus-vlan', spec: { poolRef } }),
    );
    expect(put.code, put.stderr).toBe(0);
    expect(JSON.parse(put.stdout)).toMatchObject({
      FailedEntryCount: 0,
      Entries: [{ EventId: expect.any(String) }],
    });
    await eventually(async () => expect((await api.get('claims/bus-vlan')).body.status?.value).toBeDefined());

    const release = await aws(
      'events',
      'put-events',
      '--entries',
      entries(RELEASE_REQUESTED, { namespace: 'default', name: 'bus-vlan' }),
    );
    expect(release.code, release.stderr).toBe(0);
    await eventually(async () => expect((await api.get('claims/bus-vlan')).status).toBe(404));
  });

  it('aws lambda invoke of claim-resource, as CloudFormation does, answers at the ResponseURL', async () => {
    const responseUrl = responses.url();
    const request = cloudFormationRequest('Create', { responseUrl, properties: { Spec: { poolRef } } });
    const invoked = await aws(
      'lambda',
      'invoke',
      '--function-name',
      'arn:aws:lambda:eu-west-1:111111111111:function:claim-resource',
      '--invocation-type',
      'Event',
      '--payload',
      JSON.stringify(request),
      join(scratch, 'event.json'),
    );
    expect(invoked.code, invoked.stderr).toBe(0);
    expect(JSON.parse(invoked.stdout)).toEqual({ StatusCode: 202 });
    const { body } = await responses.responseTo(responseUrl);
    expect(body).toMatchObject({
      Status: 'SUCCESS',
      RequestId: request.RequestId,
      Data: { Value: expect.any(String) },
    });
  });

  it('reports Lambda’s and EventBridge’s own errors', async () => {
    const out = join(scratch, 'error.json');
    const missing = await aws('lambda', 'invoke', '--function-name', 'nope', '--payload', '{}', out);
    expect(missing.code).toBe(255);
    expect(missing.stderr).toContain(
      'An error occurred (ResourceNotFoundException) when calling the Invoke operation: Function not found: arn:aws:lambda:eu-west-1:000000000000:function:nope',
    );
    const garbled = await aws('lambda', 'invoke', '--function-name', 'claim', '--payload', 'not json', out);
    expect(garbled.code).toBe(255);
    expect(garbled.stderr).toContain('(InvalidRequestContentException) when calling the Invoke operation');
    const malformed = await aws(
      'events',
      'put-events',
      '--entries',
      JSON.stringify([{ EventBusName: 'allot', Source: 's', DetailType: CLAIM_REQUESTED, Detail: '{oops' }]),
    );
    expect(malformed.code, malformed.stderr).toBe(0);
    expect(JSON.parse(malformed.stdout)).toMatchObject({
      FailedEntryCount: 1,
      Entries: [{ ErrorCode: 'MalformedDetail' }],
    });
  });
});
