/**
 * `allot preview <pool> [--count N] [--prefix-length L]` and `allot claim --prefix-length`, end to end
 * against the local server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, client, eventually, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { run } from '../../lib/cli/main.ts';

let allot: LocalAllot;

beforeAll(async () => {
  allot = await startTestAllot();
  const api = client(allot.url);
  const pools = [
    { kind: 'IndexPool', resource: 'indexpools', name: 'vlans', spec: { ranges: ['100..199'] } },
    {
      kind: 'IPPrefixPool',
      resource: 'ipprefixpools',
      name: 'region',
      spec: { prefixes: ['10.0.0.0/16'], allocationPrefixLengths: { min: 20, max: 28, default: 24 } },
    },
  ];
  for (const { kind, resource, name, spec } of pools) {
    const answer = await api.post(resource, { apiVersion: API_VERSION, kind, metadata: { name }, spec });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  }
});
afterAll(() => allot.close());

async function allotCli(args: string): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(args.split(' ').filter(Boolean), {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    readStdin: async () => '',
    env: { ALLOT_ENDPOINT: allot.url },
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('allot preview', () => {
  it('prints the next values of a pool found by name, one a line', async () => {
    expect(await allotCli('preview vlans --count 3')).toEqual({ code: 0, out: '100\n101\n102', err: '' });
    expect((await allotCli('preview indexpool/vlans')).out).toBe('100');
  });

  it('previews, then claims, a prefix of the length asked for', async () => {
    expect((await allotCli('preview region --prefix-length 20 --count 2')).out).toBe(
      '10.0.0.0/20\n10.0.16.0/20',
    );
    const claimed = await allotCli('claim vpc-a --pool ipprefixpool/region --prefix-length 20');
    expect(claimed.code, claimed.err).toBe(0);
    expect(claimed.out).toContain('10.0.0.0/20');
    await eventually(async () =>
      expect((await allotCli('preview region --count 2')).out).toBe('10.0.16.0/24\n10.0.17.0/24'),
    );
  });

  it('lists and describes a pool of a range of lengths and a carved pool', async () => {
    const api = client(allot.url);
    const carved = await api.post('ipprefixpools', {
      apiVersion: API_VERSION,
      kind: 'IPPrefixPool',
      metadata: { name: 'vpc-a-subnets' },
      spec: { prefixesFrom: { claimRef: { name: 'vpc-a' } }, allocationPrefixLength: 24 },
    });
    expect(carved.status, JSON.stringify(carved.body)).toBe(201);
    const listed = await allotCli('get ipprefixpools -o wide');
    expect(listed.code, listed.err).toBe(0);
    const region = await allotCli('describe ipprefixpool region');
    expect(region.code, region.err).toBe(0);
    expect(region.out).toContain('/20 to /28 (default /24)');
    const described = await allotCli('describe ipprefixpool vpc-a-subnets');
    expect(described.code, described.err).toBe(0);
    expect(described.out).toContain('from claim vpc-a: 10.0.0.0/20');
    expect(described.out).toMatch(/Total: +16\n/);
  });

  it('refuses what the pool does not take, and bad usage', async () => {
    const wrong = await allotCli('preview region --prefix-length 30');
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain('prefixLength');
    expect((await allotCli('preview')).code).toBe(2);
    expect((await allotCli('preview region --prefix-length x')).code).toBe(2);
    expect((await allotCli('preview claims/x')).code).toBe(2);
  });
});
