/**
 * lib/domain/events.ts on hand-built images: which change means which event, that ids are deterministic, and
 * that every event matches its schema.
 */
import { describe, expect, it } from 'vitest';
import {
  deriveEvents,
  eventId,
  poolUtilisations,
  reclaimAges,
  type StreamChange,
} from '../../lib/domain/events.ts';
import { expectValid, SCHEMA_DETAIL_TYPES, validators } from './schemas.ts';

const T0 = '2026-11-29T12:00:00Z';
const meta = (name: string, uid: string) => ({
  name,
  namespace: 'default',
  uid,
  generation: 1,
  creationTimestamp: T0,
  labels: {},
  annotations: {},
});
const poolRef = { kind: 'IndexPool', name: 'asns' };

function claim(phase: string, rv: number, extra: Record<string, unknown> = {}, uid = 'u-1') {
  const conditions =
    phase === 'Allocated'
      ? [
          {
            type: 'Allocated',
            status: 'True',
            reason: 'Allocated',
            message: 'holds 7',
            lastTransitionTime: T0,
          },
        ]
      : phase === 'Waiting'
        ? [
            {
              type: 'Allocated',
              status: 'False',
              reason: 'PoolExhausted',
              message: 'none left',
              lastTransitionTime: T0,
            },
          ]
        : [
            {
              type: 'Allocated',
              status: 'Unknown',
              reason: 'Allocating',
              message: '…',
              lastTransitionTime: T0,
            },
          ];
  const status =
    phase === 'Allocated'
      ? { value: '7', allocationRef: { apiVersion: 'x', kind: 'Index', name: 'asns-7' }, conditions }
      : { conditions };
  return { t: 'claim', metadata: meta('c', uid), spec: { poolRef }, status, phase, rv, ...extra };
}

function allocation(claimRef: { name: string; uid: string } | undefined, origin = 'claim') {
  return {
    t: 'alloc',
    kind: 'Index',
    metadata: meta('asns-7', 'a-1'),
    spec: { poolRef, ...(claimRef ? { claimRef } : {}) },
    value: '7',
    origin,
    rv: 1,
  };
}

function pool(held: string, available: boolean | undefined, revision = 'r1') {
  return {
    t: 'pool',
    kind: 'IndexPool',
    metadata: meta('asns', 'p-1'),
    spec: { ranges: ['1..8'], reclaimPolicy: 'Recycle' },
    ...(available === undefined
      ? {}
      : {
          counts: {
            allocated: Number(held),
            held,
            searchFrom: held,
            generation: 1,
            updatedAt: T0,
            revision,
            available,
            availableSince: T0,
          },
        }),
    rv: 1,
  };
}

const modify = (oldImage: object, newImage: object): StreamChange => ({
  eventName: 'MODIFY',
  oldImage: oldImage as never,
  newImage: newImage as never,
  recordedAt: T0,
});
const remove = (oldImage: object): StreamChange => ({
  eventName: 'REMOVE',
  oldImage: oldImage as never,
  recordedAt: T0,
});
const types = (changes: StreamChange[]) => deriveEvents(changes).map((event) => event.detailType);

describe('deriveEvents', () => {
  it.each([
    ['Allocating → Allocated', modify(claim('Allocating', 1), claim('Allocated', 2)), ['Claim Allocated']],
    ['Waiting → Allocated', modify(claim('Waiting', 2), claim('Allocated', 3)), ['Claim Allocated']],
    ['Allocating → Waiting', modify(claim('Allocating', 1), claim('Waiting', 2)), ['Claim Pending']],
    ['Allocated → Allocated (labels)', modify(claim('Allocated', 2), claim('Allocated', 3)), []],
    ['Waiting → Waiting, same reason', modify(claim('Waiting', 2), claim('Waiting', 3)), []],
    ['a claim removed', remove(claim('Allocated', 2)), ['Claim Released']],
    [
      'a lease removed before its end (a DELETE)',
      remove(claim('Allocated', 2, { leaseExpiresAt: '2026-11-29T12:01:00Z' })),
      ['Claim Released'],
    ],
    [
      'a lease removed at its end (a reader found it expired)',
      remove(claim('Allocated', 2, { leaseExpiresAt: T0 })),
      ['Claim Expired'],
    ],
    [
      "a lease removed by TTL (its identity), whatever the record's time",
      { ...remove(claim('Allocated', 2, { leaseExpiresAt: '2026-11-29T12:01:00Z' })), byTtl: true },
      ['Claim Expired'],
    ],
    [
      'Retain: uid cleared, name kept',
      modify(allocation({ name: 'c', uid: 'u-1' }), allocation({ name: 'c', uid: '' })),
      ['Allocation Reclaimed'],
    ],
    [
      'Recycle: a claim-made allocation removed',
      remove(allocation({ name: 'c', uid: 'u-1' })),
      ['Allocation Reclaimed'],
    ],
    ['a user-made allocation removed', remove(allocation({ name: 'c', uid: 'u-1' }, 'user')), []],
    ['an unbound allocation removed', remove(allocation(undefined)), []],
    ['a pool running out', modify(pool('7', true), pool('8', false, 'r2')), ['Pool Exhausted']],
    ['a pool with room again', modify(pool('8', false), pool('7', true, 'r2')), ['Pool Available']],
    ['a new pool counted for the first time', modify(pool('0', undefined), pool('0', true)), []],
    ['a pool whose counts moved but stayed available', modify(pool('1', true), pool('2', true, 'r2')), []],
  ] as const)('%s → %j', (_, change, expected) => {
    expect(types([change])).toEqual(expected);
  });

  it('carries the reason a claim waits, and another reason is news', () => {
    const other = claim('Waiting', 3);
    other.status.conditions[0]!.reason = 'PoolNotFound';
    const [event] = deriveEvents([modify(claim('Waiting', 2), other)]);
    expect(event).toMatchObject({ detailType: 'Claim Pending', detail: { reason: 'PoolNotFound' } });
  });

  it('treats a claim recreated under the same name as new', () => {
    const [event] = deriveEvents([
      modify(claim('Allocated', 5, {}, 'old'), claim('Allocated', 1, {}, 'new')),
    ]);
    expect(event).toMatchObject({ detailType: 'Claim Allocated', detail: { claim: { uid: 'new' } } });
  });

  it('tells Recycle from Retain, with the claim the value was released from', () => {
    const [retain] = deriveEvents([
      modify(allocation({ name: 'c', uid: 'u-1' }), allocation({ name: 'c', uid: '' })),
    ]);
    const [recycle] = deriveEvents([remove(allocation({ name: 'c', uid: 'u-1' }))]);
    expect(retain!.detail).toMatchObject({
      reclaimPolicy: 'Retain',
      claim: { name: 'c', uid: 'u-1' },
      value: '7',
    });
    expect(recycle!.detail).toMatchObject({ reclaimPolicy: 'Recycle', value: '7' });
  });

  it('gives the same ids for the same records, and different ids for different changes', () => {
    const changes = [
      modify(claim('Allocating', 1), claim('Allocated', 2)),
      modify(pool('7', true), pool('8', false, 'r2')),
      modify(pool('8', false, 'r2'), pool('7', true, 'r3')),
      modify(pool('7', true, 'r3'), pool('8', false, 'r4')),
    ];
    const first = deriveEvents(changes).map((event) => event.detail.eventId);
    const replay = deriveEvents(structuredClone(changes)).map((event) => event.detail.eventId);
    expect(replay).toEqual(first);
    // The pool ran out twice (revisions r2 and r4, maybe within one second): two events, two ids.
    expect(new Set(first).size).toBe(first.length);
  });

  it('makes ids of 32 hex digits from the detail type and the parts', () => {
    expect(eventId('Claim Released', 'u-1')).toMatch(/^[0-9a-f]{32}$/);
    expect(eventId('Claim Released', 'u-1')).not.toBe(eventId('Claim Allocated', 'u-1'));
  });

  it('emits events that match their schemas', () => {
    const events = deriveEvents([
      modify(claim('Allocating', 1), claim('Allocated', 2)),
      modify(claim('Allocating', 1), claim('Waiting', 2)),
      remove(claim('Allocated', 2)),
      remove(claim('Waiting', 2)),
      modify(allocation({ name: 'c', uid: 'u-1' }), allocation({ name: 'c', uid: '' })),
      modify(pool('7', true), pool('8', false, 'r2')),
      modify(pool('8', false), pool('7', true, 'r2')),
    ]);
    expect(new Set(events.map((event) => event.detailType)).size).toBe(6);
    for (const event of events) expectValid(event.detailType, event.detail);
  });
});

describe('the schemas', () => {
  it('exist for exactly the detail types Allot publishes', () => {
    expect([...validators.keys()].sort()).toEqual([...SCHEMA_DETAIL_TYPES].sort());
  });

  it('refuse an event missing its id or carrying an unknown field', () => {
    const [event] = deriveEvents([remove(claim('Allocated', 2))]);
    const { eventId: _id, ...withoutId } = event!.detail;
    expect(() => expectValid('Claim Released', withoutId)).toThrow(/eventId/);
    expect(() => expectValid('Claim Released', { ...event!.detail, extra: 1 })).toThrow(/additional/);
  });
});

describe('metrics from records', () => {
  it('report a pool utilisation when its held count changes, the last one per pool', () => {
    const changes = [
      modify(pool('4', true), pool('5', true, 'r2')),
      modify(pool('5', true, 'r2'), pool('6', true, 'r3')),
    ];
    expect(poolUtilisations(changes)).toEqual([
      { namespace: 'default', pool: { kind: 'IndexPool', name: 'asns' }, percent: 75 },
    ]);
    expect(poolUtilisations([modify(pool('4', true), pool('4', true, 'r2'))])).toEqual([]);
  });

  it('measure how old each claim removal was when handled', () => {
    expect(
      reclaimAges([remove(claim('Allocated', 2)), remove(allocation(undefined))], Date.parse(T0) + 1500),
    ).toEqual([1500]);
  });
});
