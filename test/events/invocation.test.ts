/**
 * Direct invocation and EventBridge requests, fed to the claim and release handlers on dynalite: the same
 * semantics as HTTP, and every answer a value (the Claim or a Status), never a thrown error.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../functions/observability.ts';
import { client, indexPool, startTestAllot } from '../helpers/allot.ts';
import { busEvent, httpEvent } from '../helpers/events.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { fakeContext } from '../../lib/local/server.ts';
import { createClaimHandler } from '../../functions/claim.ts';
import { Table } from '../../lib/store/table.ts';

let allot: LocalAllot;
let api: ReturnType<typeof client>;

const poolRef = { kind: 'IndexPool', name: 'asns' };
const claim = (name: string, spec: unknown = { poolRef }) => ({
  operation: 'claim',
  namespace: 'default',
  name,
  spec,
});
const release = (name: string) => ({ operation: 'release', namespace: 'default', name });
async function invoke(fn: 'claim' | 'release', event: unknown): Promise<Record<string, any>> {
  return (await allot.invoke(fn, event)) as Record<string, any>;
}

beforeAll(async () => {
  allot = await startTestAllot({ stream: false });
  api = client(allot.url);
  expect((await api.post('indexpools', indexPool('asns', ['64512..64520']))).status).toBe(201);
});

afterAll(async () => {
  await allot?.close();
});

describe('a direct claim', () => {
  it('answers with the allocated Claim, as a POST would, and the API reads the same claim', async () => {
    const answer = await invoke('claim', claim('leaf1'));
    expect(answer).toMatchObject({
      kind: 'Claim',
      metadata: { name: 'leaf1', namespace: 'default' },
      status: { value: '64512', conditions: [{ type: 'Allocated', status: 'True' }] },
    });
    expect((await api.get('claims/leaf1')).body).toEqual(answer);
  });

  it('asked again with the same name returns the same value (a PUT of the same spec)', async () => {
    const again = await invoke('claim', claim('leaf1'));
    expect(again.status.value).toBe('64512');
    expect(again.metadata.generation).toBe(1);
  });

  it('takes labels, annotations and a requested value', async () => {
    const answer = await invoke('claim', {
      ...claim('leaf2', { poolRef, value: '64519' }),
      labels: { rack: 'r7' },
      annotations: { note: 'x' },
    });
    expect(answer.status.value).toBe('64519');
    expect(answer.metadata.labels).toEqual({ rack: 'r7' });
    expect(answer.metadata.annotations).toEqual({ note: 'x' });
  });

  it('answers an invalid spec with the 422 Status an HTTP PUT would get', async () => {
    const spec = { poolRef, value: 'not-a-number' };
    const direct = await invoke('claim', claim('bad', spec));
    const http = await api.put('claims/bad', { metadata: { name: 'bad' }, spec });
    expect(http.status).toBe(422);
    expect(direct).toEqual(http.body);
    expect(direct).toMatchObject({ kind: 'Status', code: 422, reason: 'Invalid' });
  });

  it.each([
    { why: 'not an object', payload: 'claim please', message: 'the payload must be an object' },
    { why: 'no operation', payload: { namespace: 'default', name: 'x' }, message: 'operation must be' },
    {
      why: 'an unknown operation',
      payload: { operation: 'steal', namespace: 'default', name: 'x' },
      message: 'operation must be',
    },
    {
      why: 'a numeric name',
      payload: { operation: 'claim', namespace: 'default', name: 7 },
      message: 'name',
    },
    {
      why: 'labels that are not an object',
      payload: { ...claim('x'), labels: 'a=b' },
      message: 'labels must be an object',
    },
  ])('answers a payload with $why with a 400 BadRequest Status', async ({ payload, message }) => {
    const answer = await invoke('claim', payload);
    expect(answer).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect(answer.message).toContain(message);
  });

  it('is refused by the release function, which lacks the grants to allocate', async () => {
    const answer = await invoke('release', claim('leaf3'));
    expect(answer).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect((await api.get('claims/leaf3')).status).toBe(404);
  });

  it('answers a malformed namespace as HTTP does (a path that names nothing: 404)', async () => {
    const answer = await invoke('claim', { ...claim('leaf4'), namespace: 'Not_Valid' });
    expect(answer).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });
});

describe('a direct release', () => {
  it('answers with the last state of the Claim and removes it', async () => {
    await invoke('claim', claim('gone'));
    const answer = await invoke('release', release('gone'));
    expect(answer).toMatchObject({ kind: 'Claim', metadata: { name: 'gone' } });
    expect((await api.get('claims/gone')).status).toBe(404);
  });

  it('of a claim that does not exist answers a 404 Status, as DELETE does', async () => {
    const answer = await invoke('release', release('never'));
    expect(answer).toEqual((await api.delete('claims/never')).body);
    expect(answer).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it('is refused by the claim function', async () => {
    await invoke('claim', claim('kept'));
    expect(await invoke('claim', release('kept'))).toMatchObject({ kind: 'Status', code: 400 });
    expect((await api.get('claims/kept')).status).toBe(200);
  });
});

describe('EventBridge requests', () => {
  it('Allot Claim Requested claims, with the detail as the payload', async () => {
    const answer = await invoke(
      'claim',
      busEvent('Allot Claim Requested', { namespace: 'default', name: 'bus1', spec: { poolRef } }),
    );
    expect(answer).toMatchObject({ kind: 'Claim', status: { value: expect.any(String) } });
    expect((await api.get('claims/bus1')).body.status.value).toBe(answer.status.value);
  });

  it('Allot Release Requested releases', async () => {
    const answer = await invoke(
      'release',
      busEvent('Allot Release Requested', { namespace: 'default', name: 'bus1' }),
    );
    expect(answer).toMatchObject({ kind: 'Claim', metadata: { name: 'bus1' } });
    expect((await api.get('claims/bus1')).status).toBe(404);
  });

  it('ignores an operation field in the detail: the detail type decides', async () => {
    const answer = await invoke(
      'claim',
      busEvent('Allot Claim Requested', {
        operation: 'release',
        namespace: 'default',
        name: 'bus2',
        spec: { poolRef },
      }),
    );
    expect(answer).toMatchObject({ kind: 'Claim', metadata: { name: 'bus2' } });
  });

  it.each([
    { why: 'another detail type', event: busEvent('Claim Allocated', {}), message: 'is not a request' },
    {
      why: 'a detail that is not an object',
      event: busEvent('Allot Claim Requested', 'x'),
      message: 'detail',
    },
  ])('answers $why with a 400 Status', async ({ event, message }) => {
    const answer = await invoke('claim', event);
    expect(answer).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect(answer.message).toContain(message);
  });
});

describe('the HTTP path of the same handlers', () => {
  it('still serves API Gateway events', async () => {
    const response = (await allot.invoke(
      'claim',
      httpEvent('POST', '/v1/namespaces/default/claims', {
        metadata: { name: 'viahttp' },
        spec: { poolRef },
      }),
    )) as { statusCode: number; body: string };
    expect(response.statusCode).toBe(201);
    expect(JSON.parse(response.body).status.value).toEqual(expect.any(String));
  });
});

describe('a failure of ours (5xx)', () => {
  // A table that does not exist: every request fails inside, none because of the caller.
  const broken = () =>
    createClaimHandler({ table: new Table({ tableName: 'no-such-table', client: allot.table.client }) });

  it('is a 500 Status value for a direct invocation, saying nothing of internals (the log has it)', async () => {
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const answer = (await broken()(claim('x') as never, fakeContext('allot-claim'))) as Record<string, any>;
    expect(answer).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
    expect(answer.message).not.toMatch(/no-such-table|ResourceNotFound/);
    expect(logged).toHaveBeenCalledWith(
      'direct request failed',
      expect.objectContaining({ error: expect.objectContaining({ name: 'ResourceNotFoundException' }) }),
    );
    logged.mockRestore();
  });

  it('is thrown for an EventBridge request, so Lambda retries it and then dead-letters it', async () => {
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const event = busEvent('Allot Claim Requested', { namespace: 'default', name: 'x', spec: { poolRef } });
    await expect(broken()(event as never, fakeContext('allot-claim'))).rejects.toThrow(
      /Allot Claim Requested .* failed/,
    );
    logged.mockRestore();
  });
});
