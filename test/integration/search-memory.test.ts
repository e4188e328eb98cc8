/**
 * A claim handler remembers where its searches in a pool can start (lib/service/allocation/search-memory.ts: past
 * the value it took last) until the stream function writes a new epoch, which it does whenever a value may
 * have been freed. A value taken and released at once may have its object's INSERT and REMOVE in one
 * stream batch, coalesced into no change of the summaries: the epoch must move all the same, or the
 * handler goes on searching past a free value (and, in a full pool, a claim waits PoolExhausted beside
 * it). Found by the quarantine tests; the release right after the claim is what puts both in one batch.
 * A pool of a range of prefix lengths keeps its own memory (prefix-search.ts: the runs it took last, and
 * frontiers by length), with the same gap.
 */
import { expect, it } from 'vitest';
import { API_VERSION, claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

const { allot, api } = useTestAllot();
const ref = (name: string) => ({ kind: 'IndexPool', name });
const claimed = async (name: string) =>
  (await api.post('claims', claim(name, ref('mem')))).body.status.value as string | undefined;

it('a value taken and released at once is the next lone claim’s again, and never left free beside a waiting claim', async () => {
  await api.post('indexpools', indexPool('mem', ['1..2']));
  await allot.stream!.drained();
  await eventually(async () => expect((await api.get('indexpools/mem')).body.status.free).toBe('2'));
  expect(await claimed('mem-1')).toBe('1');
  expect((await api.delete('claims/mem-1')).status).toBe(200);
  await allot.stream!.drained();
  await eventually(async () => expect((await api.get('indexpools/mem')).body.status.free).toBe('2'));
  // The lowest free value for a lone caller, then the other: none waits while one is free.
  expect(await claimed('mem-2')).toBe('1');
  expect(await claimed('mem-3')).toBe('2');
});

it('in a pool of a range of prefix lengths too: a prefix taken and released at once is the next lone claim’s again', async () => {
  const pool = {
    apiVersion: API_VERSION,
    kind: 'IPPrefixPool',
    metadata: { name: 'mem-ranged' },
    spec: { prefixes: ['10.0.0.0/27'], allocationPrefixLengths: { min: 28, max: 29, default: 28 } },
  };
  expect((await api.post('ipprefixpools', pool)).status).toBe(201);
  const prefixRef = { kind: 'IPPrefixPool', name: 'mem-ranged' };
  const claimedPrefix = async (name: string, extra: Record<string, unknown> = {}) =>
    (await api.post('claims', claim(name, prefixRef, extra))).body.status.value as string | undefined;
  // Counted in /29s, the longest length handed out (api.md, "Pools").
  const settled = async () => {
    await allot.stream!.drained();
    await eventually(async () =>
      expect((await api.get('ipprefixpools/mem-ranged')).body.status.free).toBe('4'),
    );
  };
  await settled();
  // Several rounds: which ones put the object's INSERT and REMOVE in one batch is the stream's timing.
  for (let round = 0; round < 4; round++) {
    expect(await claimedPrefix(`mem-r${round}`)).toBe('10.0.0.0/28');
    expect((await api.delete(`claims/mem-r${round}`)).status).toBe(200);
    await settled();
  }
  // With the other /28 held, a claim made while the stream has not yet given the prefix back waits, and
  // is allocated once it has: a coalesced give-back still wakes it.
  expect(await claimedPrefix('mem-held', { value: '10.0.0.16/28' })).toBe('10.0.0.16/28');
  let holder = 'mem-w0';
  expect(await claimedPrefix(holder)).toBe('10.0.0.0/28');
  for (let round = 1; round <= 4; round++) {
    expect((await api.delete(`claims/${holder}`)).status).toBe(200);
    holder = `mem-w${round}`;
    expect((await api.post('claims', claim(holder, prefixRef))).status).toBe(201);
    await eventually(async () =>
      expect((await api.get(`claims/${holder}`)).body.status.value).toBe('10.0.0.0/28'),
    );
  }
});
