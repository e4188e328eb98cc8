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
import {
  ensureTable,
  localClient,
  startLocalStore,
  type LocalStore,
} from '../../lib/local/store/dynalite.ts';
import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Table } from '../../lib/store/table.ts';
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

/** Loses the answer of the next `operation` whose input mentions `text`, once. */
function loseNext(operation: string, text: string) {
  let armed = true;
  faults.plan = (attempted, input) => {
    if (!armed || attempted !== operation || !JSON.stringify(input).includes(text)) return undefined;
    armed = false;
    return 'lostAnswer';
  };
  return () => expect(armed, `no ${operation} of ${text} was made`).toBe(false);
}

/** Loses the answer of the next put whose item has this type (`pool`, `claim`, `alloc`), once. */
const loseNextPutOf = (type: string) => loseNext('PutItem', `"t":{"S":"${type}"}`);

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

  it('still answers 200 for a claim deleted by the first attempt of its delete', async () => {
    const lost = loseNext('DeleteItem', '"S":"d"');
    const answer = await call('DELETE', 'claims/d');
    lost();
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.status.value).toBe('2');
    expect((await call('GET', 'claims/d')).status).toBe(404);
  });

  it('still answers 200 for an allocation object and a pool deleted by a first attempt', async () => {
    const lostAllocation = loseNext('DeleteItem', '"S":"A#lost#IndexPool#p#0"');
    const allocation = await call('DELETE', 'indices/p-7');
    lostAllocation();
    expect(allocation.status, JSON.stringify(allocation.body)).toBe(200);
    await call('POST', 'indexpools', { metadata: { name: 'empty' }, spec: { ranges: ['1..2'] } });
    const lostPool = loseNext('DeleteItem', '"S":"empty"');
    const pool = await call('DELETE', 'indexpools/empty');
    lostPool();
    expect(pool.status, JSON.stringify(pool.body)).toBe(200);
  });

  it('still answers 404 for what is not there', async () => {
    expect((await call('DELETE', 'claims/d')).status).toBe(404);
    expect((await call('DELETE', 'indexpools/empty')).status).toBe(404);
  });

  it('binds an offered object whose binding write landed but whose answer was lost', async () => {
    await call('POST', 'indexpools', { metadata: { name: 'q' }, spec: { ranges: ['1..10'] } });
    const offered = await call('POST', 'indices', {
      metadata: { name: 'q-9', annotations: { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' } },
      spec: { poolRef: { kind: 'IndexPool', name: 'q' }, index: 9, claimRef: { name: 'e' } },
    });
    expect(offered.status).toBe(201);
    const lost = loseNext('UpdateItem', '"S":"A#lost#IndexPool#q#0"');
    const answer = await call('POST', 'claims', {
      metadata: { name: 'e' },
      spec: { poolRef: { kind: 'IndexPool', name: 'q' } },
    });
    lost();
    expect(answer.body.status).toMatchObject({ value: '9', allocationRef: { name: 'q-9' } });
    const bound = (await call('GET', 'indices?pool=q')).body.items.filter(
      (item: any) => item.spec.claimRef?.uid === answer.body.metadata.uid,
    );
    expect(bound.map((item: any) => item.metadata.name)).toEqual(['q-9']);
  });
});

describe('a claim released between its lost answer and the retry', () => {
  it('is not brought back under its uid: the claim is made anew under another', async () => {
    const client = localClient(store.endpoint);
    const releaser = DynamoDBDocumentClient.from(localClient(store.endpoint));
    const table = new Table({ tableName: 'lost', client });
    const released: string[] = [];
    // The claim's first put lands; before its answer comes back the claim is released (deleted, as the
    // DELETE handler does), and the answer is lost. The SDK would then send the same put again, and it
    // would land on the freed name: the released claim back, under the uid the stream has seen removed.
    client.middlewareStack.addRelativeTo(
      (next: (args: any) => Promise<any>, context: { commandName?: string }) => async (args: any) => {
        const item = args.input?.Item;
        if (context.commandName !== 'PutItemCommand' || item?.t?.S !== 'claim' || released.length > 0)
          return next(args);
        await next(args);
        released.push(item.metadata.M.uid.S);
        await releaser.send(new DeleteCommand({ TableName: 'lost', Key: { pk: item.pk.S, sk: item.sk.S } }));
        throw Object.assign(new Error('injected timeout after the write was applied'), {
          name: 'TimeoutError',
          $metadata: {},
        });
      },
      { relation: 'after', toMiddleware: 'retryMiddleware', name: 'releaseThenLoseAnswer' },
    );
    const lone = createHttpHandler({ table });
    const answer = (await lone(
      httpEvent('POST', '/v1/namespaces/lost/claims', {
        metadata: { name: 'r' },
        spec: { poolRef: { kind: 'IndexPool', name: 'p' } },
      }),
      fakeContext('lost'),
    )) as APIGatewayProxyStructuredResultV2;
    client.destroy();
    releaser.destroy();
    expect(released, 'the first put was not made').toHaveLength(1);
    expect(answer.statusCode, answer.body).toBe(201);
    const stored = (await call('GET', 'claims/r')).body;
    expect(stored.metadata.uid).not.toBe(released[0]);
    expect(JSON.parse(answer.body!).metadata.uid).toBe(stored.metadata.uid);
  });
});
