import { describe, it, expect } from 'vitest';
import { InvalidError } from '../../lib/domain/errors.ts';
import { API_VERSION, type ObjectKind } from '../../lib/domain/kinds.ts';
import {
  Causes,
  checkEnvelope,
  clip,
  isObject,
  objectRef,
  ownerRef,
  reclaimPolicy,
  rejectUnknownFields,
  type JsonObject,
} from '../../lib/domain/objects/validation.ts';

const NAME_CHARSET =
  'must consist of lowercase letters, digits, "-" and ".", and start and end with a letter or digit';

interface Expected {
  kind: ObjectKind;
  namespace: string;
  pathName?: string;
  nameMax?: 63 | 253;
}

function envelope(body: JsonObject, expected: Partial<Expected> = {}) {
  const causes = new Causes();
  const metadata = checkEnvelope(body, { kind: 'IndexPool', namespace: 'default', ...expected }, causes);
  return { metadata, causes: causes.list };
}

const fields = (list: readonly { field: string }[]) => list.map((cause) => cause.field);

describe('isObject and clip', () => {
  it.each([
    { value: {}, object: true },
    { value: { a: 1 }, object: true },
    { value: null, object: false },
    { value: [], object: false },
    { value: 'x', object: false },
    { value: 1, object: false },
    { value: undefined, object: false },
  ])('$value is an object: $object', ({ value, object }) => {
    expect(isObject(value)).toBe(object);
  });

  it('clips text past the limit with an ellipsis, and leaves short text alone', () => {
    expect(clip('a'.repeat(40))).toBe('a'.repeat(40));
    expect(clip('a'.repeat(41))).toBe(`${'a'.repeat(40)}…`);
    expect(clip('abcdef', 3)).toBe('abc…');
  });
});

describe('checkEnvelope: apiVersion, kind and name', () => {
  it('accepts the seed’s manifest unchanged', () => {
    const body = {
      apiVersion: API_VERSION,
      kind: 'IndexPool',
      metadata: {
        name: 'asn-pool',
        namespace: 'default',
        labels: { team: 'net' },
        annotations: { note: 'seed' },
      },
      spec: { ranges: ['64512..65534'] },
    };
    expect(envelope(body)).toEqual({
      metadata: { name: 'asn-pool', labels: { team: 'net' }, annotations: { note: 'seed' } },
      causes: [],
    });
  });

  it('accepts a body with neither apiVersion nor kind', () => {
    expect(envelope({ metadata: { name: 'p' } }).causes).toEqual([]);
  });

  it('ignores uid, generation, creationTimestamp and status on input', () => {
    const body = {
      metadata: { name: 'p', uid: 'x', generation: 'not a number', creationTimestamp: 5 },
      status: { anything: true },
    };
    expect(envelope(body)).toEqual({ metadata: { name: 'p', labels: {}, annotations: {} }, causes: [] });
  });

  it.each([
    { apiVersion: 'v1', why: 'another API version' },
    { apiVersion: 'pool.networking.metal.ironcore.dev/v1', why: 'another version of the group' },
    { apiVersion: null, why: 'null' },
    { apiVersion: 1, why: 'a number' },
  ])('rejects $why on apiVersion', ({ apiVersion }) => {
    expect(envelope({ apiVersion, metadata: { name: 'p' } }).causes).toEqual([
      { field: 'apiVersion', message: `must be ${API_VERSION}` },
    ]);
  });

  it.each([
    { kind: 'IPAddressPool', why: 'another kind' },
    { kind: 'indexpool', why: 'the kind in lowercase' },
    { kind: null, why: 'null' },
  ])('rejects $why on kind', ({ kind }) => {
    expect(envelope({ kind, metadata: { name: 'p' } }).causes).toEqual([
      { field: 'kind', message: 'must be IndexPool on this path' },
    ]);
  });

  it('checks kind against the path’s kind', () => {
    expect(envelope({ kind: 'Claim', metadata: { name: 'c' } }, { kind: 'Claim' }).causes).toEqual([]);
    expect(envelope({ kind: 'IndexPool', metadata: { name: 'c' } }, { kind: 'Claim' }).causes).toEqual([
      { field: 'kind', message: 'must be Claim on this path' },
    ]);
  });

  it.each([
    { metadata: 'p', why: 'a string' },
    { metadata: ['p'], why: 'a list' },
    { metadata: null, why: 'null' },
  ])('rejects $why as metadata', ({ metadata }) => {
    expect(envelope({ metadata })).toEqual({
      metadata: { name: '', labels: {}, annotations: {} },
      causes: [{ field: 'metadata', message: 'must be an object' }],
    });
  });

  it('requires a name when the path has none (POST)', () => {
    expect(envelope({}).causes).toEqual([{ field: 'metadata.name', message: 'is required' }]);
    expect(envelope({ metadata: {} }).causes).toEqual([{ field: 'metadata.name', message: 'is required' }]);
  });

  it('takes the name from the path when the body has none (PUT)', () => {
    expect(envelope({}, { pathName: 'from-path' })).toEqual({
      metadata: { name: 'from-path', labels: {}, annotations: {} },
      causes: [],
    });
  });

  it('requires the body’s name to match the path’s', () => {
    expect(envelope({ metadata: { name: 'other' } }, { pathName: 'p' }).causes).toEqual([
      { field: 'metadata.name', message: 'must match the name in the path (p)' },
    ]);
    expect(envelope({ metadata: { name: 'p' } }, { pathName: 'p' }).causes).toEqual([]);
  });

  it.each([
    { name: 'Bad', problem: NAME_CHARSET },
    { name: '-bad', problem: NAME_CHARSET },
    { name: '', problem: 'must not be empty' },
    { name: 'a'.repeat(64), problem: 'must be at most 63 characters' },
    { name: 7, problem: 'must be a string' },
    { name: null, problem: 'must be a string' },
  ])('rejects the name $name on metadata.name: $problem', ({ name, problem }) => {
    expect(envelope({ metadata: { name } }).causes).toEqual([{ field: 'metadata.name', message: problem }]);
  });

  it('allows 253-character names where the caller asks (allocation objects)', () => {
    const name = 'a'.repeat(253);
    expect(envelope({ metadata: { name } }, { kind: 'Index', nameMax: 253 }).causes).toEqual([]);
    expect(envelope({ metadata: { name: `${name}a` } }, { kind: 'Index', nameMax: 253 }).causes).toEqual([
      { field: 'metadata.name', message: 'must be at most 253 characters' },
    ]);
  });

  it('requires metadata.namespace, when given, to match the path', () => {
    expect(envelope({ metadata: { name: 'p', namespace: 'default' } }).causes).toEqual([]);
    expect(envelope({ metadata: { name: 'p', namespace: 'prod' } }).causes).toEqual([
      { field: 'metadata.namespace', message: 'must match the namespace in the path (default)' },
    ]);
  });

  it('collects every failing field at once', () => {
    const body = {
      apiVersion: 'v1',
      kind: 'Claim',
      metadata: { name: 'Bad', namespace: 'other', labels: 'x', annotations: { a: 1 } },
    };
    expect(fields(envelope(body).causes)).toEqual([
      'apiVersion',
      'kind',
      'metadata.name',
      'metadata.namespace',
      'metadata.labels',
      'metadata.annotations[a]',
    ]);
  });
});

describe.each(['labels', 'annotations'] as const)('checkEnvelope: metadata.%s', (map) => {
  const withMap = (value: unknown) => envelope({ metadata: { name: 'p', [map]: value } });

  it('defaults to an empty map when absent or null', () => {
    expect(withMap(undefined)).toEqual({ metadata: { name: 'p', labels: {}, annotations: {} }, causes: [] });
    expect(withMap(null).causes).toEqual([]);
  });

  it.each([
    { why: 'a 253-character key', value: { ['k'.repeat(253)]: 'v' } },
    { why: 'a 1024-character value', value: { k: 'v'.repeat(1024) } },
    { why: 'an empty value', value: { k: '' } },
    { why: 'keys with slashes and dots', value: { 'example.com/team': 'net' } },
    { why: '256 entries', value: Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`k${i}`, 'v'])) },
  ])('keeps $why', ({ value }) => {
    const { metadata, causes } = withMap(value);
    expect(causes).toEqual([]);
    expect(metadata[map]).toEqual(value);
  });

  it.each([
    {
      why: 'a string',
      value: 'team=net',
      field: `metadata.${map}`,
      message: 'must be a map of strings to strings',
    },
    { why: 'a list', value: ['a'], field: `metadata.${map}`, message: 'must be a map of strings to strings' },
    {
      why: '257 entries',
      value: Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`k${i}`, 'v'])),
      field: `metadata.${map}`,
      message: 'must hold at most 256 entries',
    },
    {
      why: 'an empty key',
      value: { '': 'v' },
      field: `metadata.${map}[]`,
      message: 'keys are 1 to 253 characters',
    },
    {
      why: 'a 254-character key (clipped in the field)',
      value: { ['k'.repeat(254)]: 'v' },
      field: `metadata.${map}[${'k'.repeat(40)}…]`,
      message: 'keys are 1 to 253 characters',
    },
    { why: 'a number value', value: { k: 1 }, field: `metadata.${map}[k]`, message: 'must be a string' },
    { why: 'a null value', value: { k: null }, field: `metadata.${map}[k]`, message: 'must be a string' },
    { why: 'an object value', value: { k: {} }, field: `metadata.${map}[k]`, message: 'must be a string' },
    {
      why: 'a 1025-character value',
      value: { k: 'v'.repeat(1025) },
      field: `metadata.${map}[k]`,
      message: 'must be at most 1024 characters',
    },
  ])('rejects $why', ({ value, field, message }) => {
    expect(withMap(value).causes).toEqual([{ field, message }]);
  });

  it('names each bad entry and keeps the good ones', () => {
    const { metadata, causes } = withMap({ good: 'yes', bad: 2, worse: false });
    expect(fields(causes)).toEqual([`metadata.${map}[bad]`, `metadata.${map}[worse]`]);
    expect(metadata[map]).toEqual({ good: 'yes' });
  });

  it('refuses "__proto__" with a cause instead of dropping it, and keeps "constructor"', () => {
    // JSON.parse makes "__proto__" an ordinary own key: a user may send it, and it must not vanish silently.
    const value = JSON.parse('{"__proto__":"x","constructor":"y"}') as JsonObject;
    const { metadata, causes } = withMap(value);
    expect(causes).toEqual([{ field: `metadata.${map}[__proto__]`, message: 'is a reserved key' }]);
    expect(Object.keys(metadata[map])).toEqual(['constructor']);
  });
});

describe('Causes', () => {
  it('does not throw while empty', () => {
    const causes = new Causes();
    expect(causes.empty).toBe(true);
    expect(() => causes.throwIfAny('IndexPool', 'p')).not.toThrow();
  });

  it('throws one 422 naming the first field', () => {
    const causes = new Causes();
    causes.add('spec.ranges', 'must be a list of at least one range');
    expect(causes.empty).toBe(false);
    let thrown: unknown;
    try {
      causes.throwIfAny('IndexPool', 'asn-pool');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidError);
    expect((thrown as InvalidError).toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: 'spec.ranges: must be a list of at least one range',
      details: {
        kind: 'IndexPool',
        name: 'asn-pool',
        causes: [{ field: 'spec.ranges', message: 'must be a list of at least one range' }],
      },
    });
  });

  it('says how many more fields failed, and lists them all', () => {
    const causes = new Causes();
    causes.add('a', 'one');
    causes.addAll([
      { field: 'b', message: 'two' },
      { field: 'c', message: 'three' },
    ]);
    expect(() => causes.throwIfAny('Claim', undefined)).toThrow('a: one (and 2 more)');
    try {
      causes.throwIfAny('Claim', undefined);
    } catch (error) {
      const status = (error as InvalidError).toStatus();
      expect(fields(status.details!.causes!)).toEqual(['a', 'b', 'c']);
      expect(status.details).not.toHaveProperty('name');
      expect(status.details!.kind).toBe('Claim');
    }
  });
});

describe('rejectUnknownFields', () => {
  it.each([
    { spec: { ranges: [] }, known: ['ranges'], fields: [] },
    { spec: {}, known: ['ranges'], fields: [] },
    { spec: { ranges: [], range: [] }, known: ['ranges'], fields: ['spec.range'] },
    { spec: { a: 1, b: 2 }, known: [], fields: ['spec.a', 'spec.b'] },
    { spec: { ['x'.repeat(50)]: 1 }, known: [], fields: [`spec.${'x'.repeat(40)}…`] },
  ])('names $fields for $spec', ({ spec, known, fields: expected }) => {
    const causes = new Causes();
    rejectUnknownFields(spec, known, causes);
    expect(fields(causes.list)).toEqual(expected);
    for (const cause of causes.list) expect(cause.message).toBe('is not a field of this kind');
  });

  it('uses the given prefix', () => {
    const causes = new Causes();
    rejectUnknownFields({ extra: 1 }, [], causes, 'spec.poolRef');
    expect(fields(causes.list)).toEqual(['spec.poolRef.extra']);
  });
});

describe('objectRef', () => {
  const read = (value: unknown) => {
    const causes = new Causes();
    const ref = objectRef(value, 'spec.poolRef', causes);
    return { ref, causes: causes.list };
  };

  it.each([
    { value: { kind: 'IndexPool', name: 'asn-pool' }, ref: { kind: 'IndexPool', name: 'asn-pool' } },
    {
      value: { kind: 'IndexPool', name: 'asn-pool', apiVersion: API_VERSION },
      ref: { kind: 'IndexPool', name: 'asn-pool', apiVersion: API_VERSION },
    },
    // The kind is the caller's to check (PoolRefInvalid is a condition, not a 422).
    {
      value: { kind: 'Nonsense', name: 'p', apiVersion: 'x/v9' },
      ref: { kind: 'Nonsense', name: 'p', apiVersion: 'x/v9' },
    },
  ])('reads $value', ({ value, ref }) => {
    expect(read(value)).toEqual({ ref, causes: [] });
  });

  it.each([
    { value: undefined, causes: [{ field: 'spec.poolRef', message: 'is required: { kind, name }' }] },
    { value: 'asn-pool', causes: [{ field: 'spec.poolRef', message: 'is required: { kind, name }' }] },
    { value: [], causes: [{ field: 'spec.poolRef', message: 'is required: { kind, name }' }] },
    { value: { name: 'p' }, causes: [{ field: 'spec.poolRef.kind', message: 'must be a string' }] },
    { value: { kind: 1, name: 'p' }, causes: [{ field: 'spec.poolRef.kind', message: 'must be a string' }] },
    { value: { kind: 'IndexPool' }, causes: [{ field: 'spec.poolRef.name', message: 'must be a string' }] },
    {
      value: { kind: 'IndexPool', name: 'Bad' },
      causes: [{ field: 'spec.poolRef.name', message: NAME_CHARSET }],
    },
    {
      value: { kind: 'IndexPool', name: 'a'.repeat(64) },
      causes: [{ field: 'spec.poolRef.name', message: 'must be at most 63 characters' }],
    },
    {
      value: { kind: 'IndexPool', name: 'p', apiVersion: 1 },
      causes: [{ field: 'spec.poolRef.apiVersion', message: 'must be a string' }],
    },
    {
      value: { kind: 'IndexPool', name: 'p', namespace: 'other' },
      causes: [{ field: 'spec.poolRef.namespace', message: 'is not a field of this kind' }],
    },
  ])('rejects $value', ({ value, causes }) => {
    expect(read(value).causes).toEqual(causes);
  });
});

describe('ownerRef', () => {
  const read = (value: unknown) => {
    const causes = new Causes();
    const owner = ownerRef(value, 'spec.owner', causes);
    return { owner, causes: causes.list };
  };

  it.each([undefined, null])('is absent for %s', (value) => {
    expect(read(value)).toEqual({ owner: undefined, causes: [] });
  });

  it.each([
    {
      value: { kind: 'Machine', name: 'm1', uid: 'u-1' },
      owner: { kind: 'Machine', name: 'm1', uid: 'u-1' },
    },
    { value: { kind: 'Machine', name: 'm1' }, owner: { kind: 'Machine', name: 'm1' } },
    // An owner is any object elsewhere: its name is not held to the 63-character rule.
    {
      value: { kind: 'Machine', name: 'M_1'.repeat(84) + 'x' },
      owner: { kind: 'Machine', name: 'M_1'.repeat(84) + 'x' },
    },
    { value: { kind: 'K', name: 'n', apiVersion: 'v1' }, owner: { kind: 'K', name: 'n', apiVersion: 'v1' } },
  ])('reads $value', ({ value, owner }) => {
    expect(read(value)).toEqual({ owner, causes: [] });
  });

  it.each([
    { value: 'm1', fields: ['spec.owner'] },
    { value: [], fields: ['spec.owner'] },
    { value: {}, fields: ['spec.owner.kind', 'spec.owner.name'] },
    { value: { kind: '', name: 'm', uid: 'u' }, fields: ['spec.owner.kind'] },
    { value: { kind: 'K', name: 'n'.repeat(254) }, fields: ['spec.owner.name'] },
    { value: { kind: 'K', name: 'n', uid: '' }, fields: ['spec.owner.uid'] },
    { value: { kind: 'K', name: 'n', uid: 5 }, fields: ['spec.owner.uid'] },
    { value: { kind: 'K', name: 'n', extra: true }, fields: ['spec.owner.extra'] },
  ])('rejects $value on $fields', ({ value, fields: expected }) => {
    expect(fields(read(value).causes)).toEqual(expected);
  });
});

describe('reclaimPolicy', () => {
  it.each([
    { value: undefined, policy: 'Recycle' },
    { value: 'Recycle', policy: 'Recycle' },
    { value: 'Retain', policy: 'Retain' },
  ])('reads $value as $policy', ({ value, policy }) => {
    const causes = new Causes();
    expect(reclaimPolicy(value, causes)).toBe(policy);
    expect(causes.empty).toBe(true);
  });

  it.each(['retain', 'Delete', '', null, 1])('rejects %s on spec.reclaimPolicy', (value) => {
    const causes = new Causes();
    reclaimPolicy(value, causes);
    expect(causes.list).toEqual([{ field: 'spec.reclaimPolicy', message: 'must be Recycle or Retain' }]);
  });
});
