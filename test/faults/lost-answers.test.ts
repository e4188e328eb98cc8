/**
 * A create whose put is applied but whose answer is lost: the SDK retries the conditional put, which then
 * fails on the item its own first attempt wrote. The caller must still get its 201, not a 409 for an
 * object nobody else created (and a claim must not sit in Allocating until the stream's deadline).
 */
import '../helpers/quiet.ts';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpHandler } from '../../functions/http.ts';
import { fakeContext } from '../../lib/local/server.ts';
import { ensureTable, localClient, startLocalStore, type LocalStore } from '../../lib/local/store.ts';
import { Table } from '../../lib/table.ts';
import { httpEvent } from '../helpers/events.ts';
import { Faults, faultyClient, seededRandom } from '../helpers/faults.ts';

let store: LocalStore;
let faults: Faults;
let handler: ReturnType<typeof createHttpHandler>;

beforeAll(async () => {
  store = await startLocalStore({ dataDir: ':memory:' });
  const setup = localClient(store.endpoint);
  await ensureTable(setup, 'lost');
  setup.destroy();
  faults = new Faults(seededRandom(1));
  handler = createHttpHandler({
    table: new Table({ tableName: 'lost', client: faultyClient(store.endpoint, faults) }),
  });
});
afterAll(() => store.close());

async function call(method: string, path: string, body?: unknown) {
  const result = (await handler(
    httpEvent(method, `/v1/namespaces/lost/${path}`, body),
    fakeContext('lost'),
  )) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode ?? 0, body: JSON.parse(result.body ?? 'null') };
}

/** Loses the answer of the next put whose item has this type (`pool`, `claim`, `alloc`), once. */
function loseNextPutOf(type: string) {
  let armed = true;
  faults.plan = (operation, input) => {
    if (!armed || operation !== 'PutItem' || !JSON.stringify(input).includes(`"t":{"S":"${type}"}`))
      return undefined;
    armed = false;
    return 'lostAnswer';
  };
  return () => expect(armed, `no put of a ${type} was made`).toBe(false);
}

describe('a create whose answer is lost and retried', () => {
  it('still answers 201 for a pool', async () => {
    const lost = loseNextPutOf('pool');
    const answer = await call('POST', 'indexpools', { metadata: { name: 'p' }, spec: { ranges: ['1..10'] } });
    lost();
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  });

  it('still answers 201 for a claim, with its value', async () => {
    const lost = loseNextPutOf('claim');
    const answer = await call('POST', 'claims', {
      metadata: { name: 'c' },
      spec: { poolRef: { kind: 'IndexPool', name: 'p' } },
    });
    lost();
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.status.value).toBe('1');
    expect((await call('GET', 'claims/c')).body.status.value).toBe('1');
  });

  it('still answers 201 for a claim created with PUT, with its value', async () => {
    const lost = loseNextPutOf('claim');
    const answer = await call('PUT', 'claims/d', { spec: { poolRef: { kind: 'IndexPool', name: 'p' } } });
    lost();
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.status.value).toBe('2');
  });

  it('still answers 201 for an allocation object', async () => {
    const lost = loseNextPutOf('alloc');
    const answer = await call('POST', 'indices', {
      metadata: { name: 'p-7' },
      spec: { poolRef: { kind: 'IndexPool', name: 'p' }, index: 7 },
    });
    lost();
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  });

  it("still answers 409 when the name is someone else's", async () => {
    const answer = await call('POST', 'claims', {
      metadata: { name: 'c' },
      spec: { poolRef: { kind: 'IndexPool', name: 'p' } },
    });
    expect(answer.status).toBe(409);
  });
});
