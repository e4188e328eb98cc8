/**
 * Pools of a range of prefix lengths against a brute-force oracle, over HTTP (fast-check): on a small
 * pool, a user's prefix of any length is accepted exactly when it overlaps no object already there (409
 * otherwise), the preview of every length lists exactly the free aligned prefixes in order, and a claim
 * of that length gets the first of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { API_VERSION, claim, useTestAllot } from '../helpers/allot.ts';

const { api, allot } = useTestAllot();
const MIN = 26;
const MAX = 30;
const BASE = ((192 << 24) >>> 0) + 2 * 256;

const text = (n: number, length: number) =>
  `${[24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.')}/${length}`;
const rangeOf = (first: number, length: number): [number, number] => [first, first + 2 ** (32 - length) - 1];

let pools = 0;

describe('a /24 of /26../30 against the brute force', () => {
  it('accepts exactly the prefixes that overlap nothing, and previews and claims the free ones in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: MIN, max: MAX }), fc.nat()), { minLength: 1, maxLength: 14 }),
        fc.integer({ min: MIN, max: MAX }),
        async (wanted, length) => {
          const name = `o${++pools}`;
          const created = await api.post('ipprefixpools', {
            apiVersion: API_VERSION,
            kind: 'IPPrefixPool',
            metadata: { name },
            spec: {
              prefixes: ['192.0.2.0/24'],
              allocationPrefixLengths: { min: MIN, max: MAX, default: 28 },
            },
          });
          expect(created.status).toBe(201);
          const held: [number, number][] = [];
          for (const [i, [l, position]] of wanted.entries()) {
            const size = 2 ** (32 - l);
            const first = BASE + (position % (256 / size)) * size;
            const [a, b] = rangeOf(first, l);
            const overlaps = held.some(([c, d]) => c <= b && a <= d);
            const answer = await api.post('ipprefixes', {
              metadata: { name: `${name}-user-${i}` },
              spec: { poolRef: { kind: 'IPPrefixPool', name }, prefix: text(first, l) },
            });
            expect(answer.status, JSON.stringify(answer.body)).toBe(overlaps ? 409 : 201);
            if (!overlaps) held.push([a, b]);
          }
          const size = 2 ** (32 - length);
          const free: string[] = [];
          for (let first = BASE; first < BASE + 256; first += size) {
            const [a, b] = rangeOf(first, length);
            if (!held.some(([c, d]) => c <= b && a <= d)) free.push(text(first, length));
          }
          await allot.stream!.drained();
          const preview = await api.get(`ipprefixpools/${name}/preview?count=100&prefixLength=${length}`);
          expect(preview.body.values).toEqual(free);
          const claimed = await api.post(
            'claims',
            claim(`${name}-c`, { kind: 'IPPrefixPool', name }, { prefixLength: length }),
          );
          expect(claimed.body.status.value).toBe(free[0]);
          expect(claimed.body.status.conditions[0].reason).toBe(free.length ? 'Allocated' : 'PoolExhausted');
        },
      ),
      { numRuns: 10 },
    );
  }, 120_000);
});
