/** The model's invariant checks find what they look for, so their silence in the model runs means something. */
import { describe, expect, it } from 'vitest';
import { alwaysViolations, drainedViolations } from './invariants.ts';
import type { Item, Snapshot, World } from './world.ts';

const pool = (name: string, ranges: string[], counts = { allocated: 0, total: '0', free: '0' }): Item => ({
  pk: `O#m#indexpools#0`,
  sk: name,
  t: 'pool',
  metadata: { name },
  spec: { ranges },
  counts,
});
const allocation = (pool: string, value: number, claimRef?: { name: string; uid: string }): Item => ({
  pk: `A#m#IndexPool#${pool}#0`,
  sk: String(value),
  t: 'alloc',
  value: String(value),
  metadata: { name: `${pool}-${value}`, annotations: {} },
  spec: { poolRef: { kind: 'IndexPool', name: pool }, claimRef },
});
const claim = (name: string, uid: string, phase: string, extra: Record<string, unknown> = {}): Item => ({
  pk: 'O#m#claims#0',
  sk: name,
  t: 'claim',
  metadata: { name, uid },
  spec: { poolRef: { kind: 'IndexPool', name: 'p' } },
  phase,
  status: { conditions: [{ status: phase === 'Allocated' ? 'True' : 'False', reason: 'PoolExhausted' }] },
  ...extra,
});

/** A world whose API shows each pool's status as the snapshot's counts say. */
function worldShowing(snapshot: Snapshot): World {
  return {
    observe: async (path: string) => ({
      status: 200,
      body: { status: snapshot.pools.find((item) => path.endsWith(`/${item.sk}`))?.counts },
    }),
  } as unknown as World;
}

describe('the invariant checks', () => {
  it('report a value held twice, a claim whose object is gone, and two claims on one object', () => {
    const a = allocation('p', 1, { name: 'x', uid: 'u1' });
    const snapshot: Snapshot = {
      pools: [],
      allocations: [a, { ...allocation('p', 1), sk: 'other', metadata: { name: 'custom' } }],
      claims: [
        claim('x', 'u1', 'Allocated', {
          bound: { pk: a.pk, sk: a.sk },
          status: { value: '1', conditions: [{ status: 'True' }] },
        }),
        claim('y', 'u2', 'Allocated', {
          bound: { pk: a.pk, sk: a.sk },
          status: { value: '1', conditions: [{ status: 'True' }] },
        }),
        claim('z', 'u3', 'Allocated', {
          bound: { pk: 'gone', sk: 'gone' },
          status: { value: '2', conditions: [{ status: 'True' }] },
        }),
      ],
      holds: [],
      quarantines: [],
    };
    const found = alwaysViolations(snapshot).join('\n');
    expect(found).toMatch(/two allocation objects hold 1/);
    expect(found).toMatch(/claims x and y hold the same allocation object/);
    expect(found).toMatch(/claim y holds p-1, which is bound to/);
    expect(found).toMatch(/claim z is Allocated but its allocation object gone\|gone is gone/);
  });

  it('report, after a drain, wrong counts, a deleted claim still bound, and a claim that waits needlessly', async () => {
    const snapshot: Snapshot = {
      pools: [pool('p', ['1..3'], { allocated: 0, total: '3', free: '3' })],
      allocations: [allocation('p', 1, { name: 'gone', uid: 'u-gone' })],
      claims: [claim('w', 'u-w', 'Waiting'), claim('s', 'u-s', 'Allocating')],
      holds: [],
      quarantines: [],
    };
    const found = (await drainedViolations(worldShowing(snapshot), snapshot)).join('\n');
    expect(found).toMatch(/pool p shows .* a recount gives {"allocated":1,"total":"3","free":"2"}/);
    expect(found).toMatch(/p-1 is still bound to deleted claim gone/);
    expect(found).toMatch(/claim w waits \(PoolExhausted\) although 2, 3 of p is free/);
    expect(found).toMatch(/claim s is still Allocating/);
  });

  it('report a name given twice, an object without its name hold, a hold without its object, and a held value counted free', async () => {
    const named = { ...allocation('p', 2), metadata: { name: 'q-1', uid: 'u-named', annotations: {} } };
    const hold = (name: string, uid: string, value: number, state = 'held'): Item => ({
      pk: 'A#m#IndexPool#q#0',
      sk: String(value),
      t: 'hold',
      metadata: { name, uid },
      poolRef: { kind: 'IndexPool', name: 'q' },
      value: String(value),
      target: { pk: 'A#m#IndexPool#p#0', sk: 'nowhere' },
      state,
    });
    const snapshot: Snapshot = {
      pools: [pool('q', ['1..2'], { allocated: 0, total: '2', free: '2' })],
      allocations: [named, { ...named, sk: '3', value: '3' }],
      claims: [],
      holds: [hold('q-1', 'u-other', 1), hold('q-2', 'u-lost', 2, 'pending')],
      quarantines: [],
    };
    const always = alwaysViolations(snapshot).join('\n');
    expect(always).toMatch(/two allocation objects are named q-1/);
    expect(always).toMatch(/name q-1 is held for u-other but u-named has it/);
    const found = (await drainedViolations(worldShowing(snapshot), snapshot)).join('\n');
    expect(found).toMatch(/q-1 has no name hold of its own/);
    expect(found).toMatch(/name hold q-2 \(pending\) has no object/);
    expect(found).toMatch(/pool q shows .* a recount gives {"allocated":0,"total":"2","free":"0"}/);
  });

  it('report a claim holding a quarantined value, and counts that leave quarantines out', async () => {
    const held = allocation('p', 2, { name: 'x', uid: 'u1' });
    const quarantined: Item = {
      pk: 'A#m#IndexPool#p#0',
      sk: '1',
      t: 'quarantine',
      value: '1',
      poolRef: { kind: 'IndexPool', name: 'p' },
      until: '2026-01-01T00:00:00Z',
    };
    const quarantining = {
      ...pool('p', ['1..3'], { allocated: 1, total: '3', free: '2' }),
      spec: { ranges: ['1..3'], quarantineSeconds: 60 },
    };
    const snapshot: Snapshot = {
      pools: [quarantining],
      allocations: [held],
      claims: [
        claim('x', 'u1', 'Allocated', {
          bound: { pk: held.pk, sk: held.sk },
          status: { value: '1', conditions: [{ status: 'True' }] },
        }),
      ],
      holds: [],
      quarantines: [quarantined],
    };
    expect(alwaysViolations(snapshot).join('\n')).toMatch(/claim x holds 1, which is quarantined/);
    const found = (await drainedViolations(worldShowing(snapshot), snapshot)).join('\n');
    expect(found).toMatch(
      /pool p shows .* a recount gives {"allocated":1,"total":"3","free":"1","quarantined":"1"}/,
    );
  });
});
