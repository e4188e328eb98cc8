/**
 * Where a list stands in its history (lib/domain/lists/snapshot.ts), case by case: the cases the model
 * (test/model/watch-once.test.ts) meets at random, and the ones it cannot (an object older than the
 * index, a claim whose lease ended).
 */
import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../lib/domain/objects/objects.ts';
import { SELECT_ALL, selectionOf } from '../../lib/domain/lists/selection.ts';
import { indexedState, snapshotOf, type PlacedEvent } from '../../lib/domain/lists/snapshot.ts';
import { fingerprint, type HistoryEvent } from '../../lib/domain/lists/watch.ts';

const claim = (
  name: string,
  labels: Record<string, string>,
  created = '2026-12-05T10:00:00Z',
): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Claim',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels, creationTimestamp: created },
  spec: { poolRef: { kind: 'IndexPool', name: 'p' } },
  status: { conditions: [] },
});

const added = (object: ApiObject): HistoryEvent => ({ type: 'ADDED', object });
const modified = (before: ApiObject, object: ApiObject): HistoryEvent => ({
  type: 'MODIFIED',
  object,
  prev: fingerprint(before),
  before: { object: before },
});
const deleted = (object: ApiObject): HistoryEvent => ({ type: 'DELETED', object });
const placed = (...events: HistoryEvent[]): PlacedEvent[] =>
  events.map((event, i) => ({ version: 2000 + i + 1, event }));
const indexOf = (...objects: ApiObject[]) =>
  new Map(
    objects.map((object) => [(object.metadata as { name: string }).name, indexedState({ object }, false)]),
  );

const a1 = claim('a', { g: 'x' });
const a2 = claim('a', { g: 'y' });
const b1 = claim('b', { g: 'x' });
const base = 1999;

describe('where a list stands', () => {
  it('at the base, when every object it shows is as the index had it there', () => {
    const found = snapshotOf({
      selection: SELECT_ALL,
      base,
      shown: [a1],
      indexed: indexOf(a1),
      events: [],
      readTo: base,
    });
    expect(found).toEqual({ version: base, changes: new Map() });
  });

  it('after the event that made the state it shows, and with what came after applied', () => {
    const events = placed(modified(a1, a2), added(b1));
    // b is in the table now: made after the page was read, so the list shows it at R.
    const visibleNow = new Map([['b', true]]);
    const found = snapshotOf({
      selection: SELECT_ALL,
      base,
      shown: [a2],
      indexed: indexOf(a1),
      events,
      readTo: 2999,
      visibleNow,
    });
    expect(found).toEqual({ version: 2999, changes: new Map([['b', events[1]!.event]]) });
  });

  it('before an event after the page: the state it shows is the one before it (`prev`)', () => {
    const events = placed(modified(a1, a2));
    const found = snapshotOf({
      selection: SELECT_ALL,
      base,
      shown: [a1],
      indexed: indexOf(a1),
      events,
      readTo: 2999,
    });
    expect(found).toEqual({ version: 2999, changes: new Map([['a', events[0]!.event]]) });
  });

  it('waits for a state the history does not hold yet', () => {
    expect(
      snapshotOf({
        selection: SELECT_ALL,
        base,
        shown: [a2],
        indexed: indexOf(a1),
        events: [],
        readTo: base,
      }),
    ).toEqual({ waitingFor: ['a'], toCheck: [] });
  });

  it('waits for an object gone before the page whose DELETED is on its way, unless its lease ended', () => {
    const input = { selection: SELECT_ALL, base, shown: [], indexed: indexOf(a1), events: [], readTo: base };
    expect(snapshotOf(input)).toEqual({ waitingFor: ['a'], toCheck: [] });
    expect(snapshotOf({ ...input, leftOut: new Set(['a']) })).toEqual({ version: base, changes: new Map() });
  });

  it('reads the table for an object not shown that the history last shows: made after the page, or gone', () => {
    const events = placed(added(b1));
    const input = { selection: SELECT_ALL, base, shown: [], indexed: new Map(), events, readTo: 2999 };
    expect(snapshotOf(input)).toEqual({ waitingFor: ['b'], toCheck: ['b'] });
    expect(snapshotOf({ ...input, visibleNow: new Map([['b', false]]) })).toEqual({
      waitingFor: ['b'],
      toCheck: [],
    });
    expect(snapshotOf({ ...input, visibleNow: new Map([['b', true]]) })).toEqual({
      version: 2999,
      changes: new Map([['b', events[0]!.event]]),
    });
    // Its DELETED came: the list stands after it, and shows it as the page did (not at all).
    const gone = placed(added(b1), deleted(b1));
    expect(snapshotOf({ ...input, events: gone })).toEqual({ version: 2999, changes: new Map() });
  });

  it('takes an object made before the index was kept as it is shown', () => {
    const old = claim('old', {}, '2026-12-01T00:00:00Z');
    const input = { selection: SELECT_ALL, base, shown: [old], indexed: new Map(), events: [], readTo: base };
    expect(snapshotOf(input)).toEqual({ waitingFor: ['old'], toCheck: [] });
    expect(snapshotOf({ ...input, unindexedBefore: '2026-12-05T09:59:00Z' })).toEqual({
      version: base,
      changes: new Map(),
    });
  });

  it('with a selector: an object that stops matching leaves the list, one that is never selected is no matter', () => {
    const selection = selectionOf('claims', { labelSelector: 'g=x' });
    if (!selection.ok) throw new Error(selection.problem);
    const events = placed(modified(a1, a2));
    const found = snapshotOf({
      selection: selection.value,
      base,
      shown: [a1],
      indexed: indexOf(a1, claim('c', { g: 'z' })),
      events,
      readTo: 2999,
    });
    expect(found).toEqual({ version: 2999, changes: new Map([['a', null]]) });
  });
});
