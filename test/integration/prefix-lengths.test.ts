/**
 * IPPrefixPools with `allocationPrefixLengths { min, max, default }` over HTTP (api.md, "Pools",
 * "Claim"): validation, claims of every length, no two objects overlapping, a specific prefix that
 * overlaps waiting (ValueTaken), a user's overlapping IPPrefix refused (409), counts in /max prefixes,
 * and a released prefix whole again for a longer or shorter claim.
 */
import { describe, expect, it } from 'vitest';
import { API_VERSION, claim, eventually, useTestAllot } from '../helpers/allot.ts';
import { expectFailure } from './support.ts';

const { api } = useTestAllot();

const lengthsPool = (
  name: string,
  prefixes: unknown,
  lengths: unknown,
  extra: Record<string, unknown> = {},
) => ({
  apiVersion: API_VERSION,
  kind: 'IPPrefixPool',
  metadata: { name },
  spec: { prefixes, allocationPrefixLengths: lengths, ...extra },
});
const ref = (name: string) => ({ kind: 'IPPrefixPool', name });

async function claimed(name: string, pool: string, extra: Record<string, unknown> = {}) {
  const answer = await api.post('claims', claim(name, ref(pool), extra));
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

/** Whether two CIDRs share an address (IPv4). */
function overlap(a: string, b: string): boolean {
  const range = (cidr: string) => {
    const [address, length] = cidr.split('/');
    const n = address!.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
    return [n, n + 2 ** (32 - Number(length)) - 1] as const;
  };
  const [a1, a2] = range(a);
  const [b1, b2] = range(b);
  return a1 <= b2 && b1 <= a2;
}

describe('validation of allocationPrefixLengths and prefixLength', () => {
  it('refuses bad lengths with a cause each (422), and changes nothing', async () => {
    const cases: [unknown, string][] = [
      [{ min: 24, max: 20, default: 22 }, 'spec.allocationPrefixLengths.min'],
      [{ min: 20, max: 28, default: 30 }, 'spec.allocationPrefixLengths.default'],
      [{ min: 16, max: 28, default: 24 }, 'spec.allocationPrefixLengths.min'],
      [{ min: 20, max: 33, default: 24 }, 'spec.allocationPrefixLengths.max'],
      [{ min: 20, max: 28 }, 'spec.allocationPrefixLengths.default'],
      [{ min: 20, max: 28, default: 24, step: 2 }, 'spec.allocationPrefixLengths.step'],
      ['20..28', 'spec.allocationPrefixLengths'],
    ];
    for (const [lengths, field] of cases) {
      const answer = await api.post('ipprefixpools', lengthsPool('bad', ['10.0.0.0/16'], lengths));
      expectFailure(answer, 422, 'Invalid');
      expect(answer.body.details.causes.map((c: { field: string }) => c.field)).toContain(field);
    }
    const both = await api.post('ipprefixpools', {
      ...lengthsPool('bad', ['10.0.0.0/16'], { min: 20, max: 28, default: 24 }),
      spec: {
        prefixes: ['10.0.0.0/16'],
        allocationPrefixLength: 24,
        allocationPrefixLengths: { min: 20, max: 28, default: 24 },
      },
    });
    expectFailure(both, 422, 'Invalid');
    expect((await api.get('ipprefixpools/bad')).status).toBe(404);
  });

  it('refuses a claim prefixLength outside the pool (422) and on other pool kinds', async () => {
    expect(
      (await api.post('ipprefixpools', lengthsPool('v', ['10.1.0.0/16'], { min: 20, max: 28, default: 24 })))
        .status,
    ).toBe(201);
    for (const prefixLength of [19, 29, 2.5, '24']) {
      const answer = await api.post('claims', claim('c-bad', ref('v'), { prefixLength }));
      expectFailure(answer, 422, 'Invalid');
      expect(answer.body.details.causes[0].field).toBe('spec.prefixLength');
    }
    const index = await api.post(
      'claims',
      claim('c-bad', { kind: 'IndexPool', name: 'x' }, { prefixLength: 24 }),
    );
    expectFailure(index, 422, 'Invalid');
    const mismatch = await api.post(
      'claims',
      claim('c-bad', ref('v'), { prefixLength: 24, value: '10.1.0.0/26' }),
    );
    expectFailure(mismatch, 422, 'Invalid');
    expect((await api.get('claims/c-bad')).status).toBe(404);
  });

  it('keeps allocationPrefixLengths immutable', async () => {
    const answer = await api.put(
      'ipprefixpools/v',
      lengthsPool('v', ['10.1.0.0/16'], { min: 20, max: 27, default: 24 }),
    );
    expectFailure(answer, 422, 'Invalid');
    expect(answer.body.details.causes[0].field).toBe('spec.allocationPrefixLengths');
  });
});

describe('allocation by length', () => {
  it('hands out prefixes of every length, never two that overlap, counted in /max prefixes', async () => {
    expect(
      (
        await api.post(
          'ipprefixpools',
          lengthsPool('region', ['10.0.0.0/16'], { min: 20, max: 28, default: 24 }),
        )
      ).status,
    ).toBe(201);
    const pool = (await api.get('ipprefixpools/region')).body;
    expect(pool.status).toMatchObject({ allocated: 0, total: '4096', free: '4096' });
    const values: string[] = [];
    const lengths = [20, 24, 28, 22, 26, 20, 25, 27, 21, 23];
    for (const [i, prefixLength] of lengths.entries()) {
      const body = await claimed(`c${i}`, 'region', { prefixLength });
      expect(body.status.conditions[0].reason).toBe('Allocated');
      expect(body.status.value.endsWith(`/${prefixLength}`)).toBe(true);
      values.push(body.status.value);
    }
    const defaulted = await claimed('c-default', 'region');
    expect(defaulted.status.value.endsWith('/24')).toBe(true);
    values.push(defaulted.status.value);
    for (let i = 0; i < values.length; i++)
      for (let j = i + 1; j < values.length; j++)
        expect(overlap(values[i]!, values[j]!), `${values[i]} ${values[j]}`).toBe(false);
    expect(values.slice(0, 3)).toEqual(['10.0.0.0/20', '10.0.16.0/24', '10.0.17.0/28']);
    const used = [...lengths, 24].reduce((sum, length) => sum + 2 ** (28 - length), 0);
    await eventually(async () =>
      expect((await api.get('ipprefixpools/region')).body.status).toMatchObject({
        allocated: values.length,
        free: String(4096 - used),
      }),
    );
  });

  it('a lone caller takes each length in order, and a prefix freed below where it got to again', async () => {
    const lengths = { min: 26, max: 28, default: 26 };
    expect((await api.post('ipprefixpools', lengthsPool('ordered', ['10.1.0.0/24'], lengths))).status).toBe(
      201,
    );
    // Counted once first, so this caller's memory of what it takes has an epoch for frees to end.
    const values = [(await claimed('o0', 'ordered')).status.value];
    await eventually(async () =>
      expect((await api.get('ipprefixpools/ordered')).body.status.allocated).toBe(1),
    );
    for (let i = 1; i < 4; i++) values.push((await claimed(`o${i}`, 'ordered')).status.value);
    expect(values).toEqual(['10.1.0.0/26', '10.1.0.64/26', '10.1.0.128/26', '10.1.0.192/26']);
    const late = await claimed('o4', 'ordered');
    expect(late.status.conditions[0].reason).toBe('PoolExhausted');
    expect((await api.delete('claims/o1')).status).toBe(200);
    await eventually(async () => expect((await api.get('claims/o4')).body.status.value).toBe('10.1.0.64/26'));
    expect((await api.delete('claims/o2')).status).toBe(200);
    // Once the summaries show it free, this caller's memory of having taken it must not hide it.
    await eventually(async () =>
      expect((await api.get('ipprefixpools/ordered/preview?prefixLength=28')).body.values).toEqual([
        '10.1.0.128/28',
      ]),
    );
    expect((await claimed('o5', 'ordered', { prefixLength: 28 })).status.value).toBe('10.1.0.128/28');
  });

  it('a specific prefix that overlaps a held one waits (ValueTaken); a user’s overlapping IPPrefix is refused (409)', async () => {
    const waiting = await claimed('inside', 'region', { value: '10.0.4.0/24' });
    expect(waiting.status.conditions[0]).toMatchObject({ status: 'False', reason: 'ValueTaken' });
    expect(waiting.status.conditions[0].message).toContain('region-10-0-0-0-20');
    const around = await claimed('around', 'region', { value: '10.0.0.0/20' });
    expect(around.status.conditions[0].reason).toBe('ValueTaken');
    const user = await api.post('ipprefixes', {
      metadata: { name: 'planned-subnets' },
      spec: { poolRef: ref('region'), prefix: '10.0.16.0/22' },
    });
    expectFailure(user, 409, 'AlreadyExists');
    expect((await api.get('ipprefixes?pool=region')).body.items.map((i: any) => i.spec.prefix)).not.toContain(
      '10.0.16.0/22',
    );
    const fits = await api.post('ipprefixes', {
      metadata: { name: 'kept-for-later' },
      spec: { poolRef: ref('region'), prefix: '10.0.240.0/20' },
    });
    expect(fits.status, JSON.stringify(fits.body)).toBe(201);
    expect((await api.get('ipprefixes/kept-for-later')).body.spec.prefix).toBe('10.0.240.0/20');
    expect((await api.get('ipprefixes/region-10-0-0-0-20')).body.spec.prefix).toBe('10.0.0.0/20');
  });

  it('a released prefix is whole again, for a shorter or a longer claim', async () => {
    // Two claims wait on c0's /20: one inside it (a /24), one for the /20 itself. Released, it goes to
    // one of them whole; the other overlaps that one and waits until it goes too.
    expect((await api.delete('claims/c0')).status).toBe(200);
    const status = async (name: string) => (await api.get(`claims/${name}`)).body.status;
    const first = await eventually(async () => {
      const [inside, around] = [await status('inside'), await status('around')];
      const winners = [inside, around].filter((s) => s.value !== undefined);
      expect(winners).toHaveLength(1);
      return inside.value !== undefined ? 'inside' : 'around';
    });
    const other = first === 'inside' ? 'around' : 'inside';
    expect((await status(other)).conditions[0].reason).toBe('ValueTaken');
    expect((await api.delete(`claims/${first}`)).status).toBe(200);
    await eventually(async () =>
      expect((await status(other)).value).toBe(other === 'inside' ? '10.0.4.0/24' : '10.0.0.0/20'),
    );
  });

  it('previews the next prefixes of a length', async () => {
    await eventually(async () => {
      const answer = await api.get('ipprefixpools/region/preview?prefixLength=20&count=3');
      expect(answer.status).toBe(200);
      for (const value of answer.body.values) expect(value.endsWith('/20')).toBe(true);
      expect(answer.body.values).not.toContain('10.0.0.0/20');
      expect(answer.body.values).not.toContain('10.0.240.0/20');
    });
  });
});
