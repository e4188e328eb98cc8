import { describe, it, expect } from 'vitest';
import { STREAM_FILTER_PATTERNS, matchesFilter, matchesPattern } from '../../lib/cloud/stream-filter.ts';

type EventName = 'INSERT' | 'MODIFY' | 'REMOVE';
type Image = Record<string, { S: string } | { N: string }>;

/** An item image in DynamoDB JSON: `t` and, for claims, `phase`. */
function image(t: string, phase?: string): Image {
  const item: Image = { pk: { S: 'p#default#x' }, sk: { S: 'x' }, t: { S: t }, rv: { N: '1' } };
  if (phase !== undefined) item.phase = { S: phase };
  return item;
}

/** A DynamoDB stream record as Lambda delivers it (NEW_AND_OLD_IMAGES): no NewImage on REMOVE, no OldImage on INSERT. */
function record(eventName: EventName, t: string, phase?: string, oldPhase: string | undefined = phase) {
  const dynamodb: Record<string, unknown> = { Keys: { pk: { S: 'p#default#x' }, sk: { S: 'x' } } };
  if (eventName !== 'REMOVE') dynamodb.NewImage = image(t, phase);
  if (eventName !== 'INSERT') dynamodb.OldImage = image(t, oldPhase);
  return { eventID: '1', eventName, eventSource: 'aws:dynamodb', dynamodb };
}

const CHANGES: EventName[] = ['INSERT', 'MODIFY'];
const ALL: EventName[] = ['INSERT', 'MODIFY', 'REMOVE'];

describe('the stream filter patterns pass', () => {
  it.each(ALL.flatMap((eventName) => ['pool', 'alloc', 'hold'].map((t) => ({ eventName, t }))))(
    '$eventName of a $t item',
    ({ eventName, t }) => {
      expect(matchesFilter(record(eventName, t))).toBe(true);
    },
  );

  it.each(['Allocating', 'Waiting', 'Allocated', 'PoolRefInvalid', undefined])(
    'REMOVE of a claim in phase %s',
    (phase) => {
      expect(matchesFilter(record('REMOVE', 'claim', phase))).toBe(true);
    },
  );

  it.each(CHANGES.flatMap((eventName) => ['Allocating', 'Waiting'].map((phase) => ({ eventName, phase }))))(
    '$eventName of a claim in phase $phase',
    ({ eventName, phase }) => {
      expect(matchesFilter(record(eventName, 'claim', phase))).toBe(true);
    },
  );

  it('MODIFY of a claim that goes from Allocated back to Waiting', () => {
    expect(matchesFilter(record('MODIFY', 'claim', 'Waiting', 'Allocated'))).toBe(true);
  });

  it.each(['Allocating', 'Waiting'])(
    'MODIFY of a claim that goes from %s to Allocated (Claim Allocated)',
    (was) => {
      expect(matchesFilter(record('MODIFY', 'claim', 'Allocated', was))).toBe(true);
    },
  );
});

describe('the stream filter patterns drop', () => {
  it.each(
    CHANGES.flatMap((eventName) => ['Allocated', 'PoolRefInvalid'].map((phase) => ({ eventName, phase }))),
  )('$eventName of a claim in phase $phase', ({ eventName, phase }) => {
    expect(matchesFilter(record(eventName, 'claim', phase))).toBe(false);
  });

  it.each(CHANGES)('%s of a claim without a phase', (eventName) => {
    expect(matchesFilter(record(eventName, 'claim'))).toBe(false);
  });

  it.each(ALL.flatMap((eventName) => ['stub', 'name'].map((t) => ({ eventName, t }))))(
    '$eventName of a $t item',
    ({ eventName, t }) => {
      expect(matchesFilter(record(eventName, t))).toBe(false);
    },
  );

  it.each(ALL)('%s of a pool-looking item in another attribute type', (eventName) => {
    const r = record(eventName, 'pool');
    const images = r.dynamodb as Record<string, Image | undefined>;
    for (const key of ['NewImage', 'OldImage']) if (images[key]) images[key]!.t = { N: '1' };
    expect(matchesFilter(r)).toBe(false);
  });

  it.each([
    { why: 'a record without dynamodb', value: { eventName: 'INSERT' } },
    { why: 'an empty record', value: {} },
    { why: 'undefined', value: undefined },
    { why: 'null', value: null },
    { why: 'a string', value: 'pool' },
  ])('$why', ({ value }) => {
    expect(matchesFilter(value)).toBe(false);
  });
});

describe('matchesPattern', () => {
  it.each([
    { why: 'a listed value', record: { a: 'x' }, pattern: { a: ['x', 'y'] }, matches: true },
    { why: 'an unlisted value', record: { a: 'z' }, pattern: { a: ['x', 'y'] }, matches: false },
    { why: 'a missing field', record: {}, pattern: { a: ['x'] }, matches: false },
    { why: 'a nested listed value', record: { a: { b: 'x' } }, pattern: { a: { b: ['x'] } }, matches: true },
    { why: 'a nested field missing', record: { a: {} }, pattern: { a: { b: ['x'] } }, matches: false },
    {
      why: 'every field of the pattern',
      record: { a: 'x', b: 'y' },
      pattern: { a: ['x'], b: ['z'] },
      matches: false,
    },
    { why: 'extra fields in the record', record: { a: 'x', extra: 1 }, pattern: { a: ['x'] }, matches: true },
    { why: 'an empty pattern', record: { a: 'x' }, pattern: {}, matches: true },
    {
      why: 'a bare literal in the pattern (not filter syntax)',
      record: { a: 'x' },
      pattern: { a: 'x' },
      matches: false,
    },
  ])('$why → $matches', ({ record: r, pattern, matches }) => {
    expect(matchesPattern(r, pattern)).toBe(matches);
  });

  it('needs one pattern of the list to match', () => {
    expect(matchesFilter({ a: 'x' }, [{ a: ['y'] }, { a: ['x'] }])).toBe(true);
    expect(matchesFilter({ a: 'x' }, [])).toBe(false);
  });

  it('uses only Lambda filter syntax the construct can pass on: nested objects and arrays of strings', () => {
    const check = (value: unknown): void => {
      if (Array.isArray(value)) {
        for (const entry of value) expect(typeof entry).toBe('string');
      } else {
        expect(typeof value).toBe('object');
        for (const entry of Object.values(value as object)) check(entry);
      }
    };
    for (const pattern of STREAM_FILTER_PATTERNS) check(pattern);
  });
});
