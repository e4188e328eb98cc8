/**
 * AWS's own clients against the local server (lib/local/aws-apis.ts): the real SDK's LambdaClient and
 * EventBridgeClient, pointed at its port. Invoke reaches the directly invoked functions by name or ARN;
 * PutEvents reaches the claim and release functions by the deployed bus's rules (lib/cloud/requests.ts),
 * and their outcome events land where local events land. Every mistake gets those APIs' own errors.
 */
import '../helpers/quiet.ts';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_REQUESTED, RELEASE_REQUESTED } from '../../lib/domain/events.ts';
import { LOCAL_EVENT_BUS } from '../../lib/local/aws-apis.ts';
import type { MemoryEventSink } from '../../lib/local/events.ts';
import { eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

const { allot, api } = useTestAllot();
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let lambda: LambdaClient;
let bridge: EventBridgeClient;

beforeAll(async () => {
  lambda = new LambdaClient({ endpoint: allot.url, region: 'eu-west-1', credentials, maxAttempts: 1 });
  bridge = new EventBridgeClient({ endpoint: allot.url, region: 'eu-west-1', credentials, maxAttempts: 1 });
  expect((await api.post('indexpools', indexPool('vlans', ['100..199']))).status).toBe(201);
});

afterAll(() => {
  lambda?.destroy();
  bridge?.destroy();
});

const payloadOf = (answer: { Payload?: Uint8Array }) => JSON.parse(Buffer.from(answer.Payload!).toString());
const poolRef = { kind: 'IndexPool', name: 'vlans' };

describe('Lambda Invoke', () => {
  it.each([
    'claim',
    'arn:aws:lambda:eu-west-1:123456789012:function:claim',
    '123456789012:function:claim:$LATEST',
  ])('runs the claim function named %s, answering its result', async (name) => {
    const claimName = `by-name-${name.length}`;
    const answer = await lambda.send(
      new InvokeCommand({
        FunctionName: name,
        Payload: JSON.stringify({
          operation: 'claim',
          namespace: 'default',
          name: claimName,
          spec: { poolRef },
        }),
      }),
    );
    expect(answer.StatusCode).toBe(200);
    expect(answer.FunctionError).toBeUndefined();
    expect(answer.ExecutedVersion).toBe('$LATEST');
    const claim = payloadOf(answer);
    expect(claim).toMatchObject({ kind: 'Claim', metadata: { name: claimName } });
    expect((await api.get(`claims/${claimName}`)).body.status.value).toBe(claim.status.value);
  });

  it('runs the release function, and an asynchronous invoke (Event) is accepted at once and happens', async () => {
    await lambda.send(
      new InvokeCommand({
        FunctionName: 'claim',
        Payload: JSON.stringify({
          operation: 'claim',
          namespace: 'default',
          name: 'soon-gone',
          spec: { poolRef },
        }),
      }),
    );
    const accepted = await lambda.send(
      new InvokeCommand({
        FunctionName: 'release',
        InvocationType: 'Event',
        Payload: JSON.stringify({ operation: 'release', namespace: 'default', name: 'soon-gone' }),
      }),
    );
    expect(accepted.StatusCode).toBe(202);
    await eventually(async () => expect((await api.get('claims/soon-gone')).status).toBe(404));
  });

  it('answers a DryRun with 204 and runs nothing', async () => {
    const answer = await lambda.send(
      new InvokeCommand({
        FunctionName: 'claim',
        InvocationType: 'DryRun',
        Payload: JSON.stringify({ operation: 'claim', namespace: 'default', name: 'dry', spec: { poolRef } }),
      }),
    );
    expect(answer.StatusCode).toBe(204);
    expect((await api.get('claims/dry')).status).toBe(404);
  });

  it.each([
    ['nope', 'arn:aws:lambda:eu-west-1:000000000000:function:nope'],
    ['api', 'arn:aws:lambda:eu-west-1:000000000000:function:api'],
    [
      'arn:aws:lambda:eu-west-1:123456789012:function:stream',
      'arn:aws:lambda:eu-west-1:123456789012:function:stream',
    ],
    ['claim:v2', 'arn:aws:lambda:eu-west-1:000000000000:function:claim:v2'],
  ])('answers ResourceNotFoundException (404) for %s, which is not invoked directly', async (name, arn) => {
    const error = await lambda.send(new InvokeCommand({ FunctionName: name, Payload: '{}' })).catch((e) => e);
    expect(error.name).toBe('ResourceNotFoundException');
    expect(error.$metadata.httpStatusCode).toBe(404);
    expect(error.message).toBe(`Function not found: ${arn}`);
  });

  it('answers InvalidRequestContentException (400) for a payload that is not JSON', async () => {
    const error = await lambda
      .send(new InvokeCommand({ FunctionName: 'claim', Payload: Buffer.from('{"operation":') }))
      .catch((e) => e);
    expect(error.name).toBe('InvalidRequestContentException');
    expect(error.$metadata.httpStatusCode).toBe(400);
    expect(error.message).toMatch(/^Could not parse request body into json/);
  });

  it('answers a malformed request with the function’s own Status, as the deployed function does', async () => {
    const answer = await lambda.send(
      new InvokeCommand({ FunctionName: 'release', Payload: JSON.stringify({ hi: 1 }) }),
    );
    expect(answer.StatusCode).toBe(200);
    expect(payloadOf(answer)).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
  });

  it('answers Lambda’s errors, never a 5xx, for other paths and invocation types', async () => {
    const other = await fetch(`${allot.url}/2015-03-31/functions/claim/configuration`);
    expect(other.status).toBe(404);
    expect(other.headers.get('x-amzn-errortype')).toBe('UnknownOperationException');
    const badType = await fetch(`${allot.url}/2015-03-31/functions/claim/invocations`, {
      method: 'POST',
      headers: { 'x-amz-invocation-type': 'Sometimes' },
      body: '{}',
    });
    expect(badType.status).toBe(400);
    expect(badType.headers.get('x-amzn-errortype')).toBe('InvalidParameterValueException');
    expect(await badType.json()).toMatchObject({
      Type: 'User',
      message: expect.stringMatching(/invocationType/),
    });
  });
});

describe('EventBridge PutEvents', () => {
  const entry = (detailType: string, detail: unknown, extra: Record<string, unknown> = {}) => ({
    EventBusName: LOCAL_EVENT_BUS,
    Source: 'team.provisioning',
    DetailType: detailType,
    Detail: JSON.stringify(detail),
    ...extra,
  });

  it('routes Allot Claim Requested and Allot Release Requested to their functions by the bus’s rules', async () => {
    const put = await bridge.send(
      new PutEventsCommand({
        Entries: [entry(CLAIM_REQUESTED, { namespace: 'default', name: 'via-bus', spec: { poolRef } })],
      }),
    );
    expect(put.FailedEntryCount).toBe(0);
    expect(put.Entries![0]!.EventId).toMatch(/^[0-9a-f-]{36}$/);
    const claim = await eventually(async () => {
      const answer = await api.get('claims/via-bus');
      expect(answer.body.status?.value).toBeDefined();
      return answer.body;
    });
    // The outcome events land where local events land (the stream function publishes them).
    const sink = allot.events as MemoryEventSink;
    await eventually(async () =>
      expect(sink.events).toContainEqual(
        expect.objectContaining({
          'detail-type': 'Claim Allocated',
          detail: expect.objectContaining({ value: claim.status.value }),
        }),
      ),
    );
    await bridge.send(
      new PutEventsCommand({
        Entries: [entry(RELEASE_REQUESTED, { namespace: 'default', name: 'via-bus' })],
      }),
    );
    await eventually(async () => expect((await api.get('claims/via-bus')).status).toBe(404));
  });

  it('accepts, as EventBridge does, what no rule matches (Allot’s own source, another bus) and runs nothing', async () => {
    const detail = { namespace: 'default', name: 'unrouted', spec: { poolRef } };
    const put = await bridge.send(
      new PutEventsCommand({
        Entries: [
          entry(CLAIM_REQUESTED, detail, { Source: 'allot' }),
          entry(CLAIM_REQUESTED, detail, { EventBusName: 'default' }),
          entry(CLAIM_REQUESTED, detail, { EventBusName: undefined }),
          entry('Something Else', detail),
          // Routed, and delivered with the others: once it has run, theirs would have too.
          entry(CLAIM_REQUESTED, { namespace: 'default', name: 'routed-marker', spec: { poolRef } }),
        ],
      }),
    );
    expect(put.FailedEntryCount).toBe(0);
    await eventually(async () =>
      expect((await api.get('claims/routed-marker')).body.status?.value).toBeDefined(),
    );
    expect((await api.get('claims/unrouted')).status).toBe(404);
  });

  it('fails an entry without Source, DetailType or Detail, or whose Detail is not a JSON object, and keeps the rest', async () => {
    const put = await bridge.send(
      new PutEventsCommand({
        Entries: [
          { EventBusName: LOCAL_EVENT_BUS, DetailType: CLAIM_REQUESTED, Detail: '{}' },
          entry(CLAIM_REQUESTED, 'x', { Detail: '{not json' }),
          entry(CLAIM_REQUESTED, [1, 2]),
          entry(CLAIM_REQUESTED, { namespace: 'default', name: 'kept', spec: { poolRef } }),
        ],
      }),
    );
    expect(put.FailedEntryCount).toBe(3);
    expect(put.Entries!.map((result) => result.ErrorCode)).toEqual([
      'InvalidArgument',
      'MalformedDetail',
      'MalformedDetail',
      undefined,
    ]);
    expect(put.Entries![0]!.ErrorMessage).toMatch(/Source/);
    await eventually(async () => expect((await api.get('claims/kept')).status).toBe(200));
  });

  it('refuses no entries and more than ten with ValidationException', async () => {
    for (const entries of [[], Array.from({ length: 11 }, () => entry('x', {}))]) {
      const error = await bridge.send(new PutEventsCommand({ Entries: entries })).catch((e) => e);
      expect(error.name).toBe('ValidationException');
      expect(error.$metadata.httpStatusCode).toBe(400);
    }
  });

  it('answers an unknown target UnknownOperationException and a body that is no JSON SerializationException', async () => {
    const call = (target: string, body: string) =>
      fetch(`${allot.url}/`, {
        method: 'POST',
        headers: { 'x-amz-target': target, 'content-type': 'application/x-amz-json-1.1' },
        body,
      });
    const unknown = await call('AWSEvents.ListRules', '{}');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ __type: 'UnknownOperationException' });
    const garbled = await call('AWSEvents.PutEvents', '{{');
    expect(garbled.status).toBe(400);
    expect(await garbled.json()).toMatchObject({ __type: 'SerializationException' });
  });
});
