/**
 * A claim handler remembers where its searches in a pool can start (lib/service/search-memory.ts: past
 * the value it took last) until the stream function writes a new epoch, which it does whenever a value may
 * have been freed. A value taken and released at once may have its object's INSERT and REMOVE in one
 * stream batch, coalesced into no change of the summaries: the epoch must move all the same, or the
 * handler goes on searching past a free value (and, in a full pool, a claim waits PoolExhausted beside
 * it). Found by the quarantine tests; the release right after the claim is what puts both in one batch.
 */
import { expect, it } from 'vitest';
import { claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';

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
