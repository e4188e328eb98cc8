/**
 * The fault middleware (test/helpers/faults.ts) does what the fault runs rely on: the real SDK retries the
 * throttling and timeouts it injects, a lost answer leaves its write applied, and a dead handler's calls
 * all fail from the chosen one on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, PutCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  ensureTable,
  localClient,
  startLocalStore,
  type LocalStore,
} from '../../lib/local/store/dynalite.ts';
import { Faults, HandlerDiedError, faultyClient } from '../helpers/faults.ts';

let store: LocalStore;
const TABLE = 'sdk-faults';

beforeAll(async () => {
  store = await startLocalStore({ dataDir: ':memory:' });
  const client = localClient(store.endpoint);
  await ensureTable(client, TABLE);
  client.destroy();
});
afterAll(() => store.close());

/** A generator that yields the given numbers in turn (to pick each fault exactly). */
const sequence = (...values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length]!;
};

function documentClient(faults: Faults) {
  return DynamoDBDocumentClient.from(faultyClient(store.endpoint, faults));
}

describe('the fault middleware', () => {
  it('throttles every attempt: the SDK tries three times, then gives up with the throttling error', async () => {
    const faults = new Faults(sequence(0, 0.1, 0.9));
    faults.rate = 1;
    const doc = documentClient(faults);
    await expect(doc.send(new GetCommand({ TableName: TABLE, Key: { pk: 'a', sk: 'a' } }))).rejects.toThrow(
      /throttling/,
    );
    expect(faults.injected.throttle).toBe(3);
  });

  it('loses the answer of an applied write: the retry then finds its own write', async () => {
    // First attempt: a fault, of the lost-answer kind; the retry: no fault.
    const faults = new Faults(sequence(0, 0.9, 0.5));
    faults.rate = 0.3;
    const doc = documentClient(faults);
    const put = new PutCommand({
      TableName: TABLE,
      Item: { pk: 'lost', sk: 'lost' },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    await expect(doc.send(put)).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(faults.injected.lostAnswer).toBe(1);
    faults.rate = 0;
    const stored = await doc.send(new GetCommand({ TableName: TABLE, Key: { pk: 'lost', sk: 'lost' } }));
    expect(stored.Item).toEqual({ pk: 'lost', sk: 'lost' });
  });

  it('kills a handler before its n-th call, and every call after, until revived', async () => {
    const faults = new Faults(sequence(0.5));
    const doc = documentClient(faults);
    const get = () => doc.send(new GetCommand({ TableName: TABLE, Key: { pk: 'x', sk: 'x' } }));
    faults.dieBeforeCall(2);
    await expect(get()).resolves.toBeDefined();
    await expect(get()).rejects.toBeInstanceOf(HandlerDiedError);
    await expect(get()).rejects.toBeInstanceOf(HandlerDiedError);
    expect(faults.revive()).toBe(true);
    await expect(get()).resolves.toBeDefined();
    expect(faults.injected.died).toBe(1);
  });
});
