/**
 * `Custom::AllotClaim`'s whole protocol against the local server, through the real SDK's LambdaClient
 * invoking the claim-resource function as CloudFormation does (asynchronously, `InvocationType: Event`),
 * with a local listener in place of the presigned `ResponseURL` (test/helpers/cloudformation.ts): what
 * each request answers, and what it leaves in the store, read over the HTTP API.
 */
import '../helpers/quiet.ts';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClaimResourceHandler } from '../../functions/claim-resource.ts';
import { fakeContext } from '../../lib/local/server.ts';
import { LOGICAL_ID_ANNOTATION, STACK_ID_ANNOTATION } from '../../lib/domain/objects/claim-resource.ts';
import { Table } from '../../lib/store/table.ts';
import { API_VERSION, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import {
  cloudFormationRequest,
  OTHER_STACK_ID,
  STACK_ID,
  startResponseListener,
  type RequestOptions,
  type ResponseListener,
} from '../helpers/cloudformation.ts';
import { Faults, faultyClient, seededRandom } from '../helpers/faults.ts';

const { allot, api } = useTestAllot();
let responses: ResponseListener;
let lambda: LambdaClient;

const prefixPool = {
  apiVersion: API_VERSION,
  kind: 'IPPrefixPool',
  metadata: { name: 'vpcs' },
  spec: { prefixes: ['10.0.0.0/14'], allocationPrefixLengths: { min: 16, max: 24, default: 20 } },
};
const vpcSpec = (prefixLength: number) => ({ poolRef: { kind: 'IPPrefixPool', name: 'vpcs' }, prefixLength });

beforeAll(async () => {
  responses = await startResponseListener();
  lambda = new LambdaClient({
    endpoint: allot.url,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  expect((await api.post('ipprefixpools', prefixPool)).status).toBe(201);
  expect((await api.post('indexpools', indexPool('asns', ['64512..64513']))).status).toBe(201);
  const tiny = {
    ...prefixPool,
    metadata: { name: 'tiny' },
    spec: { prefixes: ['10.9.0.0/24'], allocationPrefixLength: 25 },
  };
  expect((await api.post('ipprefixpools', tiny)).status).toBe(201);
});

afterAll(async () => {
  lambda?.destroy();
  await responses?.close();
});

type Options = Omit<RequestOptions, 'responseUrl'>;

/** Sends a request as CloudFormation does and returns what was PUT to its ResponseURL. */
async function send(type: 'Create' | 'Update' | 'Delete', options: Options, requestId?: string) {
  const responseUrl = responses.url();
  const request = cloudFormationRequest(type, { ...options, responseUrl, requestId });
  const invoked = await lambda.send(
    new InvokeCommand({
      FunctionName: 'arn:aws:lambda:eu-west-1:111111111111:function:claim-resource',
      InvocationType: 'Event',
      Payload: JSON.stringify(request),
    }),
  );
  expect(invoked.StatusCode).toBe(202);
  const response = await responses.responseTo(responseUrl);
  return { request, response, body: response.body };
}

const claimAt = async (physicalId: string) => {
  const [namespace, name] = physicalId.split('/');
  return api.get(`/v1/namespaces/${namespace}/claims/${name}`);
};

describe('Create', () => {
  it('answers SUCCESS with the value, as a PUT of the JSON CloudFormation reads, and the claim records its stack', async () => {
    const { request, response, body } = await send('Create', {
      logicalId: 'VpcAllotCidrA',
      properties: { Spec: vpcSpec(16), Labels: { team: 'net' } },
    });
    expect(response.method).toBe('PUT');
    // cfn-response's own headers: the presigned URL is signed without a content type.
    expect(response.headers['content-type']).toBe('');
    expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(body)));
    expect(body).toMatchObject({
      Status: 'SUCCESS',
      StackId: request.StackId,
      RequestId: request.RequestId,
      LogicalResourceId: 'VpcAllotCidrA',
      NoEcho: false,
      Data: { Value: '10.0.0.0/16', AllocationName: 'vpcs-10-0-0-0-16', Namespace: 'default' },
    });
    expect(body.PhysicalResourceId).toBe(`default/${body.Data.Name}`);
    expect(body.Data.Name).toMatch(/^networking-vpcallotcidra-[0-9a-f]{10}$/);
    const claim = await claimAt(body.PhysicalResourceId);
    expect(claim.body.status.value).toBe('10.0.0.0/16');
    expect(claim.body.metadata.labels).toEqual({ team: 'net' });
    expect(claim.body.metadata.annotations).toEqual({
      [STACK_ID_ANNOTATION]: STACK_ID,
      [LOGICAL_ID_ANNOTATION]: 'VpcAllotCidrA',
    });
  });

  it('the same request twice, one after the other and at once, makes one claim with one value', async () => {
    const options = { logicalId: 'Twice', properties: { Spec: vpcSpec(18) } };
    const first = await send('Create', options, 'same-request');
    const again = await send('Create', options, 'same-request');
    const together = await Promise.all([send('Create', options), send('Create', options)]);
    for (const answer of [again, ...together]) {
      expect(answer.body.Status).toBe('SUCCESS');
      expect(answer.body.PhysicalResourceId).toBe(first.body.PhysicalResourceId);
      expect(answer.body.Data).toEqual(first.body.Data);
    }
    const claims = (await api.get('claims?limit=100')).body.items.filter(
      (item: any) => item.metadata.annotations?.[LOGICAL_ID_ANNOTATION] === 'Twice',
    );
    expect(claims).toHaveLength(1);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a missing pool', { poolRef: { kind: 'IndexPool', name: 'nowhere' } }, /PoolNotFound: /],
    ['a value taken', { poolRef: { kind: 'IndexPool', name: 'asns' }, value: 64513 }, /ValueTaken: /],
    [
      'an invalid spec',
      { poolRef: { kind: 'IndexPool', name: 'asns' }, within: 'ten' },
      /Invalid: .*spec\.within/,
    ],
  ])('fails on %s with the claim’s reason and message, and leaves no claim', async (_, spec, reason) => {
    if (spec.value !== undefined) {
      const taken = await send('Create', { logicalId: 'TakesIt', properties: { Spec: spec } });
      expect(taken.body.Status).toBe('SUCCESS');
    }
    const { body } = await send('Create', { logicalId: 'Fails', properties: { Spec: spec } });
    expect(body.Status).toBe('FAILED');
    expect(body.Reason).toMatch(reason);
    expect(body.Data).toBeUndefined();
    expect((await claimAt(body.PhysicalResourceId)).status).toBe(404);
    // The rollback's Delete of the failed Create: SUCCESS, and nothing else goes.
    const rollback = await send('Delete', {
      logicalId: 'Fails',
      physicalId: body.PhysicalResourceId,
      properties: { Spec: spec },
    });
    expect(rollback.body.Status).toBe('SUCCESS');
  });

  it('fails on an exhausted pool at once (nothing waits for a value to free up)', async () => {
    const spec = { poolRef: { kind: 'IPPrefixPool', name: 'tiny' } };
    for (const logicalId of ['First', 'Second'])
      expect((await send('Create', { logicalId, properties: { Spec: spec } })).body.Status).toBe('SUCCESS');
    const full = await send('Create', { logicalId: 'Third', properties: { Spec: spec } });
    expect(full.body).toMatchObject({ Status: 'FAILED' });
    expect(full.body.Reason).toMatch(/PoolExhausted: /);
    expect((await claimAt(full.body.PhysicalResourceId)).status).toBe(404);
  });

  it('fails on properties that are no claim, with a physical id that its Delete leaves alone', async () => {
    const { body } = await send('Create', { properties: { Spec: 'nope', Colour: 'red' } });
    expect(body.Status).toBe('FAILED');
    expect(body.Reason).toMatch(/unknown properties Colour/);
    expect(body.PhysicalResourceId).toMatch(/^allot:not-created:/);
    const rollback = await send('Delete', {
      physicalId: body.PhysicalResourceId,
      properties: { Spec: 'nope' },
    });
    expect(rollback.body.Status).toBe('SUCCESS');
  });

  it('refuses a claimName another stack’s resource holds, and leaves that claim as it was', async () => {
    const theirs = await send('Create', {
      stackId: OTHER_STACK_ID,
      logicalId: 'Asn',
      properties: { Name: 'shared-asn', Spec: { poolRef: { kind: 'IndexPool', name: 'asns' } } },
    });
    expect(theirs.body.Status).toBe('SUCCESS');
    const ours = await send('Create', {
      logicalId: 'Asn',
      properties: {
        Name: 'shared-asn',
        Spec: { poolRef: { kind: 'IndexPool', name: 'asns' } },
        Labels: { x: 'y' },
      },
    });
    expect(ours.body.Status).toBe('FAILED');
    expect(ours.body.Reason).toMatch(/already exists and was not made by this resource/);
    const claim = await claimAt('default/shared-asn');
    expect(claim.body.metadata.annotations[STACK_ID_ANNOTATION]).toBe(OTHER_STACK_ID);
    expect(claim.body.metadata.labels ?? {}).toEqual({});
    // Its rollback Delete names the claim too: SUCCESS, and the other stack's claim stays.
    const rollback = await send('Delete', {
      logicalId: 'Asn',
      physicalId: 'default/shared-asn',
      properties: {},
    });
    expect(rollback.body.Status).toBe('SUCCESS');
    expect((await claimAt('default/shared-asn')).status).toBe(200);
    // Nor may it update it.
    const update = await send('Update', {
      logicalId: 'Asn',
      physicalId: 'default/shared-asn',
      properties: {
        Name: 'shared-asn',
        Spec: { poolRef: { kind: 'IndexPool', name: 'asns' } },
        Labels: { x: 'y' },
      },
      oldProperties: { Name: 'shared-asn', Spec: { poolRef: { kind: 'IndexPool', name: 'asns' } } },
    });
    expect(update.body.Status).toBe('FAILED');
    expect((await claimAt('default/shared-asn')).body.metadata.labels ?? {}).toEqual({});
    // Its own stack releases it.
    const own = await send('Delete', {
      stackId: OTHER_STACK_ID,
      logicalId: 'Asn',
      physicalId: 'default/shared-asn',
    });
    expect(own.body.Status).toBe('SUCCESS');
    expect((await claimAt('default/shared-asn')).status).toBe(404);
  });
});

describe('Update', () => {
  it('of the labels alone keeps the claim (the same physical id) and changes its labels', async () => {
    const properties = { Spec: vpcSpec(20), Labels: { env: 'dev' } };
    const created = await send('Create', { logicalId: 'Labelled', properties });
    const updated = await send('Update', {
      logicalId: 'Labelled',
      physicalId: created.body.PhysicalResourceId,
      properties: { ...properties, Labels: { env: 'prod' } },
      oldProperties: properties,
    });
    expect(updated.body).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: created.body.PhysicalResourceId,
    });
    expect(updated.body.Data).toEqual(created.body.Data);
    const claim = await claimAt(created.body.PhysicalResourceId);
    expect(claim.body.metadata.labels).toEqual({ env: 'prod' });
    expect(claim.body.metadata.uid).toBeDefined();
  });

  it('of the spec answers a new physical id; the old claim goes with the Delete CloudFormation sends it', async () => {
    const before = { Spec: vpcSpec(22) };
    const created = await send('Create', { logicalId: 'Resized', properties: before });
    const oldId = created.body.PhysicalResourceId;
    const after = { Spec: vpcSpec(21) };
    const updated = await send('Update', {
      logicalId: 'Resized',
      physicalId: oldId,
      properties: after,
      oldProperties: before,
    });
    expect(updated.body.Status).toBe('SUCCESS');
    const newId = updated.body.PhysicalResourceId;
    expect(newId).not.toBe(oldId);
    expect(updated.body.Data.Value).toMatch(/\/21$/);
    // Both exist until CloudFormation's clean-up Delete of the old one.
    expect((await claimAt(oldId)).status).toBe(200);
    const cleanup = await send('Delete', { logicalId: 'Resized', physicalId: oldId, properties: before });
    expect(cleanup.body).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: oldId });
    expect((await claimAt(oldId)).status).toBe(404);
    expect((await claimAt(newId)).body.status.value).toBe(updated.body.Data.Value);
    // Released: the pool's Recycle policy frees the old value (the stream deletes its allocation object).
    const oldAllocation = created.body.Data.AllocationName;
    await eventually(async () => expect((await api.get(`ipprefixes/${oldAllocation}`)).status).toBe(404));
  });

  it('rolled back mid-update goes back to the old claim (still there), and the new one goes', async () => {
    const before = { Spec: vpcSpec(23) };
    const created = await send('Create', { logicalId: 'RolledBack', properties: before });
    const after = { Spec: vpcSpec(24) };
    const forward = await send('Update', {
      logicalId: 'RolledBack',
      physicalId: created.body.PhysicalResourceId,
      properties: after,
      oldProperties: before,
    });
    const newId = forward.body.PhysicalResourceId;
    // Another resource failed: CloudFormation updates this one back, with the properties reversed.
    const back = await send('Update', {
      logicalId: 'RolledBack',
      physicalId: newId,
      properties: before,
      oldProperties: after,
    });
    expect(back.body).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: created.body.PhysicalResourceId,
    });
    expect(back.body.Data).toEqual(created.body.Data);
    const cleanup = await send('Delete', { logicalId: 'RolledBack', physicalId: newId, properties: after });
    expect(cleanup.body.Status).toBe('SUCCESS');
    expect((await claimAt(newId)).status).toBe(404);
    expect((await claimAt(created.body.PhysicalResourceId)).body.status.value).toBe(created.body.Data.Value);
  });

  it('of the spec of a named claim fails, as CloudFormation fails to replace a named resource', async () => {
    const before = { Name: 'named-vpc', Spec: vpcSpec(22) };
    const created = await send('Create', { logicalId: 'Named', properties: before });
    expect(created.body.PhysicalResourceId).toBe('default/named-vpc');
    const updated = await send('Update', {
      logicalId: 'Named',
      physicalId: 'default/named-vpc',
      properties: { ...before, Spec: vpcSpec(21) },
      oldProperties: before,
    });
    expect(updated.body).toMatchObject({ Status: 'FAILED', PhysicalResourceId: 'default/named-vpc' });
    expect(updated.body.Reason).toMatch(/Change claimName too/);
    expect((await claimAt('default/named-vpc')).body.spec.prefixLength).toBe(22);
  });
});

describe('Delete', () => {
  it('releases the claim, and a repeated Delete answers SUCCESS too', async () => {
    const properties = { Spec: { poolRef: { kind: 'IPPrefixPool', name: 'vpcs' } } };
    const created = await send('Create', { logicalId: 'Gone', properties });
    expect(created.body.Data.Value).toMatch(/\/20$/);
    for (let i = 0; i < 2; i++) {
      const deleted = await send('Delete', {
        logicalId: 'Gone',
        physicalId: created.body.PhysicalResourceId,
        properties,
      });
      expect(deleted.body).toMatchObject({
        Status: 'SUCCESS',
        PhysicalResourceId: created.body.PhysicalResourceId,
      });
    }
    expect((await claimAt(created.body.PhysicalResourceId)).status).toBe(404);
  });

  it('fails while a pool is carved from the claim (ClaimInUse), and releases it once the pool is gone', async () => {
    const properties = { Spec: vpcSpec(24) };
    const created = await send('Create', { logicalId: 'Carved', properties });
    const name = created.body.Data.Name;
    const carved = { metadata: { name: 'hosts' }, spec: { prefixesFrom: { claimRef: { name } } } };
    expect((await api.post('ipaddresspools', carved)).status).toBe(201);
    const refused = await send('Delete', {
      logicalId: 'Carved',
      physicalId: created.body.PhysicalResourceId,
      properties,
    });
    expect(refused.body.Status).toBe('FAILED');
    expect(refused.body.Reason).toMatch(/^ClaimInUse: .*IPAddressPool "hosts"/);
    expect((await claimAt(created.body.PhysicalResourceId)).status).toBe(200);
    expect((await api.delete('ipaddresspools/hosts')).status).toBe(200);
    const deleted = await send('Delete', {
      logicalId: 'Carved',
      physicalId: created.body.PhysicalResourceId,
      properties,
    });
    expect(deleted.body.Status).toBe('SUCCESS');
    expect((await claimAt(created.body.PhysicalResourceId)).status).toBe(404);
  });

  it('of another stack’s claim answers SUCCESS and leaves it', async () => {
    const theirs = await send('Create', {
      stackId: OTHER_STACK_ID,
      logicalId: 'Kept',
      properties: { Spec: vpcSpec(24) },
    });
    const ours = await send('Delete', {
      logicalId: 'Kept',
      physicalId: theirs.body.PhysicalResourceId,
      properties: {},
    });
    expect(ours.body).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: theirs.body.PhysicalResourceId,
    });
    expect((await claimAt(theirs.body.PhysicalResourceId)).body.status.value).toBe(theirs.body.Data.Value);
  });

  it('with a physical id CloudFormation made up (the Create’s answer never came) releases the Create’s claim', async () => {
    const properties = { Spec: vpcSpec(24) };
    const created = await send('Create', { logicalId: 'Lost', properties });
    const invented = 'Networking-Lost-1XK2Q9ZJ3ABCD';
    const deleted = await send('Delete', { logicalId: 'Lost', physicalId: invented, properties });
    expect(deleted.body).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: invented });
    expect((await claimAt(created.body.PhysicalResourceId)).status).toBe(404);
  });
});

describe('the provider always answers', () => {
  /** The provider on a table whose client the test controls, called as Lambda calls it. */
  function provider(remainingMs = 10_000) {
    const faults = new Faults(seededRandom(24));
    const table = new Table({
      tableName: allot.table.tableName,
      client: faultyClient(allot.store.endpoint, faults),
    });
    const handler = createClaimResourceHandler({ table });
    const context = { ...fakeContext('claim-resource'), getRemainingTimeInMillis: () => remainingMs };
    return { faults, call: (event: unknown) => handler(event, context) };
  }

  it('with FAILED and why when its store fails, and the Create leaves no claim', async () => {
    const { faults, call } = provider();
    faults.plan = () => 'throttle'; // every attempt throttled: the SDK gives up
    const responseUrl = responses.url();
    const request = cloudFormationRequest('Create', {
      logicalId: 'Broken',
      properties: { Spec: vpcSpec(24) },
      responseUrl,
    });
    await call(request);
    const { body } = await responses.responseTo(responseUrl);
    expect(body.Status).toBe('FAILED');
    expect(body.Reason).toMatch(/^InternalError: internal error/);
    expect((await claimAt(body.PhysicalResourceId)).status).toBe(404);
  });

  it('with FAILED before its time runs out, and the Delete of the rollback releases what it made late', async () => {
    const { faults, call } = provider(3_300); // 300 ms left once the answer's margin is kept back
    // The claim's first write waits until the test lets it go: the answer must come first.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    faults.beforeCall = (operation) => (operation === 'PutItem' ? held : undefined);
    const responseUrl = responses.url();
    const properties = { Spec: vpcSpec(24) };
    const request = cloudFormationRequest('Create', { logicalId: 'Slow', properties, responseUrl });
    const answered = call(request);
    const { body } = await responses.responseTo(responseUrl);
    expect(body.Status).toBe('FAILED');
    expect(body.Reason).toMatch(/timed out/);
    await answered;
    expect((await claimAt(body.PhysicalResourceId)).status).toBe(404);
    letGo();
    // The claim it went on to make: the Delete that follows a failed Create names it, and it goes.
    await eventually(async () => expect((await claimAt(body.PhysicalResourceId)).status).toBe(200));
    const deleted = await send('Delete', {
      logicalId: 'Slow',
      physicalId: body.PhysicalResourceId,
      properties,
    });
    expect(deleted.body.Status).toBe('SUCCESS');
    expect((await claimAt(body.PhysicalResourceId)).status).toBe(404);
  });

  it('cannot answer what is no CloudFormation request: it PUTs nothing and says why', async () => {
    const before = responses.seen.length;
    const answer = await lambda.send(
      new InvokeCommand({ FunctionName: 'claim-resource', Payload: JSON.stringify({ hello: 1 }) }),
    );
    expect(answer.FunctionError).toBeUndefined();
    expect(JSON.parse(Buffer.from(answer.Payload!).toString())).toEqual({
      error: expect.stringMatching(/not a CloudFormation/),
    });
    expect(responses.seen.length).toBe(before);
  });
});
