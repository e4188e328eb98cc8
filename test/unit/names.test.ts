import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { ALLOCATION_NAME_MAX, nameProblem } from '../../lib/domain/names.ts';
import { nameRole, valueNamedBy } from '../../lib/domain/objects/name-roles.ts';
import { valueKind } from '../../lib/domain/values/spaces.ts';

const CHARSET =
  'must consist of lowercase letters, digits, "-" and ".", and start and end with a letter or digit';

describe('nameProblem for object names (up to 63 characters)', () => {
  it.each([
    { name: 'a', why: 'one letter' },
    { name: '0', why: 'one digit' },
    { name: 'asn-pool', why: 'letters and a dash' },
    { name: 'vpc.main-1', why: 'dots, dashes and digits' },
    { name: '1abc9', why: 'starting and ending with digits' },
    { name: 'a--b', why: 'consecutive dashes inside' },
    { name: 'a'.repeat(63), why: '63 characters' },
    { name: `a${'-'.repeat(61)}b`, why: '63 characters with 61 dashes inside' },
  ])('accepts $why', ({ name }) => {
    expect(nameProblem(name)).toBeUndefined();
  });

  it.each([
    { name: '', problem: 'must not be empty', why: 'the empty name' },
    { name: 'a'.repeat(64), problem: 'must be at most 63 characters', why: '64 characters' },
    { name: 'Asn-pool', problem: CHARSET, why: 'an uppercase letter' },
    { name: '-pool', problem: CHARSET, why: 'a leading dash' },
    { name: 'pool-', problem: CHARSET, why: 'a trailing dash' },
    { name: '.pool', problem: CHARSET, why: 'a leading dot' },
    { name: 'pool.', problem: CHARSET, why: 'a trailing dot' },
    { name: '-', problem: CHARSET, why: 'a lone dash' },
    { name: 'my_pool', problem: CHARSET, why: 'an underscore' },
    { name: 'my pool', problem: CHARSET, why: 'a space' },
    { name: 'pool/x', problem: CHARSET, why: 'a slash' },
    { name: 'pöol', problem: CHARSET, why: 'a non-ASCII letter' },
    { name: 'pool\n', problem: CHARSET, why: 'a trailing newline' },
    { name: ' pool', problem: CHARSET, why: 'a leading space' },
  ])('rejects $why: "$problem"', ({ name, problem }) => {
    expect(nameProblem(name)).toBe(problem);
  });

  it.each([
    { name: undefined, why: 'undefined' },
    { name: null, why: 'null' },
    { name: 42, why: 'a number' },
    { name: ['a'], why: 'a list' },
    { name: { name: 'a' }, why: 'an object' },
  ])('rejects $why: must be a string', ({ name }) => {
    expect(nameProblem(name)).toBe('must be a string');
  });
});

describe('nameProblem for allocation object names (up to 253 characters)', () => {
  it('allows 253 characters', () => {
    expect(ALLOCATION_NAME_MAX).toBe(253);
    expect(nameProblem('a'.repeat(253), 253)).toBeUndefined();
    expect(nameProblem(`a${'.b'.repeat(126)}`, 253)).toBeUndefined();
  });

  it('accepts a long deterministic name that the 63-character rule rejects', () => {
    const name = `${'p'.repeat(63)}-9223372036854775806`;
    expect(nameProblem(name, 253)).toBeUndefined();
    expect(nameProblem(name)).toBe('must be at most 63 characters');
  });

  it.each([
    { name: 'a'.repeat(254), why: '254 characters', problem: 'must be at most 253 characters' },
    { name: '', why: 'the empty name', problem: 'must not be empty' },
    { name: 'A', why: 'an uppercase letter', problem: CHARSET },
    { name: 'a-', why: 'a trailing dash', problem: CHARSET },
    { name: '-a', why: 'a leading dash', problem: CHARSET },
  ])('rejects $why: $problem', ({ name, problem }) => {
    expect(nameProblem(name, 253)).toBe(problem);
  });
});

describe('nameProblem properties', () => {
  const allowed = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-.'.split(''));
  const alnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split(''));

  it('accepts exactly the names of allowed characters that start and end with a letter or digit, up to the limit', () => {
    fc.assert(
      fc.property(
        fc.array(allowed, { minLength: 1, maxLength: 300 }).map((chars) => chars.join('')),
        fc.constantFrom(63 as const, 253 as const),
        (name, max) => {
          const valid = name.length <= max && /^[a-z0-9]/.test(name) && /[a-z0-9]$/.test(name);
          expect(nameProblem(name, max) === undefined).toBe(valid);
        },
      ),
    );
  });

  it('rejects any name with a character outside [a-z0-9.-]', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.string({ minLength: 1, maxLength: 1 }).filter((c) => !/[a-z0-9.-]/.test(c)),
        fc.string({ maxLength: 20 }),
        (before, bad, after) => {
          const name = `a${before}${bad}${after}a`;
          expect(nameProblem(name)).toBeDefined();
          expect(nameProblem(name, 253)).toBeDefined();
        },
      ),
    );
  });

  it('accepts any name of letters and digits up to 63 characters', () => {
    fc.assert(
      fc.property(fc.array(alnum, { minLength: 1, maxLength: 63 }), (chars) => {
        expect(nameProblem(chars.join(''))).toBeUndefined();
      }),
    );
  });
});

describe('nameRole: how an allocation object name stays unique (issue 13)', () => {
  it.each([
    { kind: 'Index', name: 'p1-5', pool: 'p1', value: '5', role: 'own' },
    { kind: 'Index', name: 'idx-1', pool: 'p1', value: '5', role: 'held', named: ['idx', '1'] },
    { kind: 'Index', name: 'p1-6', pool: 'p1', value: '5', role: 'held', named: ['p1', '6'] },
    { kind: 'Index', name: 'lp-obj-a', pool: 'lp', value: '5', role: 'custom' },
    { kind: 'Index', name: 'p1-007', pool: 'p1', value: '7', role: 'custom' },
    // Its pool part is no pool name (longer than 63): no pool can give it, so it is an ordinary name.
    { kind: 'Index', name: `${'a'.repeat(64)}-1`, pool: 'p1', value: '1', role: 'custom' },
    {
      kind: 'IPAddress',
      name: 'x-10-0-0-1',
      pool: 'lan',
      value: '10.1.0.5',
      role: 'held',
      named: ['x', '10.0.0.1'],
    },
    {
      kind: 'IPAddress',
      name: 'v6-2001-0db8-0000-0000-0000-0000-0000-0001',
      pool: 'six',
      value: '2001:db8:1::9',
      role: 'held',
      named: ['v6', '2001:db8::1'],
    },
    {
      kind: 'IPPrefix',
      name: 'pp-10-0-0-0-24',
      pool: 'wide',
      value: '192.168.7.0/24',
      role: 'held',
      named: ['pp', '10.0.0.0/24'],
    },
    { kind: 'IPPrefix', name: 'wide-192-168-7-0-24', pool: 'wide', value: '192.168.7.0/24', role: 'own' },
  ] as const)('$name of $pool $value is $role', ({ kind, name, pool, value, role, ...rest }) => {
    const parsed = valueKind(kind).parse(value);
    if (!parsed.ok) throw new Error(parsed.problem);
    const found = nameRole(kind, name, pool, parsed.value);
    expect(found.role).toBe(role);
    const named = 'named' in rest ? rest.named : undefined;
    if (named && found.role === 'held') {
      expect([found.pool, found.value.value]).toEqual(named);
      expect(valueNamedBy(kind, name)?.pool).toBe(named[0]);
    }
  });
});
