/**
 * A claim asked for while it is being allocated (api.md, "Routes": no answer carries a claim still being
 * allocated), over HTTP: ten identical PUTs at once, and a claim whose first request's handler died
 * mid-allocation, asked for again (PUT or GET) before the stream function's deadline.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import { Faults, faultyClient, seededRandom } from '../helpers/faults.ts';
import { HANDLER_DEADLINE_MS } from '../../lib/service/allocation/decide.ts';
import { allocatedState } from './support.ts';

const faults = new Faults(seededRandom(13));
const { api } = useTestAllot({ apiClient: (endpoint) => faultyClient(endpoint, faults) });

afterEach(() => {
  faults.revive();
  faults.beforeCall = undefined;
});
// The stream function waits for a dead handler until its deadline: move the clock past it at the end.
afterAll(() => {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => real() + HANDLER_DEADLINE_MS + 1000);
});

const ref = (name: string) => ({ kind: 'IndexPool', name });

/** The handler dies just before its first call that matches. */
function dieBefore(match: (operation: string, input: any) => boolean) {
  faults.beforeCall = (operation, input) => {
    if (match(operation, input)) {
      faults.dieBeforeCall(1);
      faults.beforeCall = undefined;
    }
  };
}

async function objectsOf(pool: string) {
  return (await api.get(`indices?pool=${pool}`)).body.items as any[];
}

describe('ten identical PUTs of one new claim at once', () => {
  it('all answer the same uid and value: one 201, nine 200, and one allocation object exists', async () => {
    await api.post('indexpools', indexPool('ten', ['1..100']));
    const body = claim('ten-a', ref('ten'));
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.put('claims/ten-a', body)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200, 200, 201,
    ]);
    for (const answer of answers) expect(allocatedState(answer.body)).toBe('True/Allocated');
    expect(new Set(answers.map((answer) => answer.body.metadata.uid)).size).toBe(1);
    expect(new Set(answers.map((answer) => answer.body.status.value)).size).toBe(1);
    const objects = await objectsOf('ten');
    expect(objects.map((object) => object.metadata.name)).toEqual([
      answers[0]!.body.status.allocationRef.name,
    ]);
    expect(objects[0].spec.claimRef.uid).toBe(answers[0]!.body.metadata.uid);
  });

  it('all answer the reason it waits when the pool is exhausted, never Allocating', async () => {
    await api.post('indexpools', indexPool('full', ['1']));
    expect((await api.post('claims', claim('full-a', ref('full')))).body.status.value).toBe('1');
    const body = claim('full-b', ref('full'));
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.put('claims/full-b', body)));
    for (const answer of answers) expect(allocatedState(answer.body)).toBe('False/PoolExhausted');
    expect(new Set(answers.map((answer) => answer.body.metadata.uid)).size).toBe(1);
  });
});

describe('identical PUTs that change a waiting claim', () => {
  // Found by the model: the first PUT wrote the new spec and allocated, while the others answered the
  // claim as written, with the old spec's reason; the change now allocates as a new claim does.
  it('all answer the outcome of the new spec, not the old reason', async () => {
    await api.post('indexpools', indexPool('respec', ['0']));
    const waiting = await api.post('claims', claim('respec-a', ref('respec'), { within: '1..1' }));
    expect(allocatedState(waiting.body)).toBe('False/PoolExhausted');
    const body = claim('respec-a', ref('respec'));
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.put('claims/respec-a', body)));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(allocatedState(answer.body)).toBe('True/Allocated');
      expect(answer.body.status.value).toBe('0');
    }
  });
});

describe('a claim whose first request died mid-allocation, asked for again before the deadline', () => {
  it('before its allocation put: a PUT again takes the allocation over and answers the value', async () => {
    await api.post('indexpools', indexPool('died', ['1..10']));
    dieBefore((operation, input) => operation === 'PutItem' && input.Item?.t === 'alloc');
    const body = claim('died-a', ref('died'));
    expect((await api.put('claims/died-a', body)).status).toBe(500);
    faults.revive();
    const again = await api.put('claims/died-a', body);
    expect(again.status).toBe(200);
    expect(allocatedState(again.body)).toBe('True/Allocated');
    expect(again.body.status.value).toBe('1');
    expect((await api.get('claims/died-a')).body).toEqual(again.body);
    expect((await objectsOf('died')).map((object) => object.metadata.name)).toEqual(['died-1']);
  }, 20_000);

  it('before its allocation put: a GET answers the claim with its value', async () => {
    dieBefore((operation, input) => operation === 'PutItem' && input.Item?.t === 'alloc');
    expect((await api.put('claims/died-b', claim('died-b', ref('died')))).status).toBe(500);
    faults.revive();
    const read = await api.get('claims/died-b');
    expect(read.status).toBe(200);
    expect(allocatedState(read.body)).toBe('True/Allocated');
    expect(read.body.status.value).toBe('2');
  }, 20_000);

  it('after its allocation put, before its settle: the answer is the value that object holds', async () => {
    dieBefore(
      (operation, input) =>
        operation === 'UpdateItem' && String(input.Key?.pk ?? '').startsWith('O#default#claims#'),
    );
    const body = claim('died-c', ref('died'));
    expect((await api.put('claims/died-c', body)).status).toBe(500);
    faults.revive();
    const again = await api.put('claims/died-c', body);
    expect(again.status).toBe(200);
    expect(allocatedState(again.body)).toBe('True/Allocated');
    await eventually(async () => {
      const mine = (await objectsOf('died')).filter((object) => object.spec.claimRef?.name === 'died-c');
      expect(mine.map((object) => object.spec.index)).toEqual([Number(again.body.status.value)]);
    });
  }, 20_000);
});
