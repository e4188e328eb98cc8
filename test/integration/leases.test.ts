/**
 * Leases over HTTP (api.md, "Claim"; docs/leases.md): `spec.leaseSeconds` and `status.leaseExpiresAt`,
 * renewals (the renew route on /v1 and the Kubernetes paths, a changed leaseSeconds), bad input, and
 * expiry: a claim past its lease is gone to reads, lists and a repeat PUT at once, deleted by whichever
 * comes first (a reader, the repair sweep, the TTL emulation), its value reclaimed as for a release, and
 * its event `Claim Expired`. Time is the test's: Date.now moves (the service's one clock), the emulated
 * TTL runs when asked.
 */
import { describe, expect, it } from 'vitest';
import { useMovedClock } from '../helpers/moved-clock.ts';
import type { MemoryEventSink } from '../../lib/local/events.ts';
import { createRepairHandler } from '../../functions/repair.ts';
import { objectKey } from '../../lib/store/keys.ts';
import { claim, eventually, indexPool, useTestAllot } from '../helpers/allot.ts';
import { expectFailure, expectInvalid } from './support.ts';

const { allot, api } = useTestAllot({ ttlIntervalMs: 0 });

const ref = (name: string) => ({ kind: 'IndexPool', name });
const { pass } = useMovedClock();

const drained = () => allot.stream!.drained();
/**
 * An expiry made by a reader or the sweep is told from a release by the record's time (domain/events.ts
 * removalExpired). DynamoDB Local stamps records with its own clock, which this file's moved clock is
 * ahead of: there such a removal reads as a release, and only TTL's (its identity) as an expiry.
 */
const recordsOnOurClock = process.env.ALLOT_STORE !== 'dynamodb-local';
function expectExpiredOnce(name: string): void {
  const expired = eventsOf('Claim Expired', name);
  const released = eventsOf('Claim Released', name);
  expect(expired.length + released.length).toBe(1);
  if (recordsOnOurClock) expect(expired).toHaveLength(1);
}
const eventsOf = (type: string, name: string) =>
  (allot.events as MemoryEventSink).events.filter(
    (event) =>
      event['detail-type'] === type && (event.detail as { claim?: { name: string } }).claim?.name === name,
  );

/** The stream has worked through what expired: the pool's allocated count comes to `allocated`. */
async function poolSettles(pool: string, allocated: number) {
  await drained();
  await eventually(async () =>
    expect((await api.get(`indexpools/${pool}`)).body.status.allocated).toBe(allocated),
  );
}

async function leased(name: string, pool: string, leaseSeconds = 60) {
  const answer = await api.post('claims', claim(name, ref(pool), { leaseSeconds }));
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

describe('a lease', () => {
  it('ends leaseSeconds after it was made: status.leaseExpiresAt, whole seconds, UTC', async () => {
    await api.post('indexpools', indexPool('lease-a', ['1..5']));
    const before = Math.floor(Date.now() / 1000) * 1000;
    const made = await leased('lease-a1', 'lease-a', 120);
    expect(made.spec.leaseSeconds).toBe(120);
    expect(made.status.value).toBe('1');
    expect(made.status.leaseExpiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const end = Date.parse(made.status.leaseExpiresAt);
    expect(end - before).toBeGreaterThanOrEqual(120_000);
    expect(end - before).toBeLessThanOrEqual(122_000);
    // A claim without a lease shows none.
    const plain = await api.post('claims', claim('lease-a2', ref('lease-a')));
    expect(plain.body.status.leaseExpiresAt).toBeUndefined();
    expect((await api.get('claims/lease-a1')).body.status.leaseExpiresAt).toBe(made.status.leaseExpiresAt);
  });

  it('refuses a leaseSeconds out of range or not an integer (422 naming it, nothing written)', async () => {
    for (const leaseSeconds of [59, 31_536_001, 90.5, '120', null, true, -60]) {
      const answer = await api.post('claims', claim('lease-bad', ref('lease-a'), { leaseSeconds }));
      expectInvalid(answer, 'spec.leaseSeconds');
      expect((await api.get('claims/lease-bad')).status).toBe(404);
    }
    for (const leaseSeconds of [60, 31_536_000]) {
      const answer = await api.put(
        `claims/lease-edge-${leaseSeconds}`,
        claim(`lease-edge-${leaseSeconds}`, ref('lease-a'), { leaseSeconds }),
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    }
  });

  it('renews from now: POST …/renew on /v1 and the Kubernetes path; 409 without a lease; 404 when gone', async () => {
    await api.post('indexpools', indexPool('lease-r', ['1..5']));
    const made = await leased('lease-r1', 'lease-r', 60);
    pass(45);
    const renewed = await api.post('claims/lease-r1/renew', undefined);
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
    // Ends are whole seconds, rounded up: a lease is never shorter than asked.
    const later = Date.parse(renewed.body.status.leaseExpiresAt) - Date.parse(made.status.leaseExpiresAt);
    expect(later).toBeGreaterThanOrEqual(44_000);
    expect(later).toBeLessThanOrEqual(46_000);
    expect(renewed.body.status.value).toBe(made.status.value);
    pass(45); // past the first end, not the second
    expect((await api.get('claims/lease-r1')).status).toBe(200);
    const kube = await api.post(
      '/apis/pool.networking.metal.ironcore.dev/v1alpha1/namespaces/default/claims/lease-r1/renew',
      undefined,
    );
    expect(kube.status, JSON.stringify(kube.body)).toBe(200);
    expect(Date.parse(kube.body.status.leaseExpiresAt)).toBeGreaterThan(
      Date.parse(renewed.body.status.leaseExpiresAt),
    );

    await api.post('claims', claim('lease-r2', ref('lease-r')));
    expectFailure(await api.post('claims/lease-r2/renew', undefined), 409, 'Conflict');
    expectFailure(await api.post('claims/lease-none/renew', undefined), 404, 'NotFound');
  });

  it('renews when a PUT changes leaseSeconds, and lasts when a PUT drops it', async () => {
    await api.post('indexpools', indexPool('lease-p', ['1..5']));
    const made = await leased('lease-p1', 'lease-p', 60);
    pass(30);
    const same = await api.put('claims/lease-p1', claim('lease-p1', ref('lease-p'), { leaseSeconds: 60 }));
    expect(same.body.status.leaseExpiresAt).toBe(made.status.leaseExpiresAt);
    const longer = await api.put('claims/lease-p1', claim('lease-p1', ref('lease-p'), { leaseSeconds: 600 }));
    expect(longer.status).toBe(200);
    const later = Date.parse(longer.body.status.leaseExpiresAt) - Date.parse(made.status.leaseExpiresAt);
    expect(later).toBeGreaterThanOrEqual(569_000);
    expect(later).toBeLessThanOrEqual(571_000);
    const kept = await api.put('claims/lease-p1', claim('lease-p1', ref('lease-p')));
    expect(kept.status).toBe(200);
    expect(kept.body.status.leaseExpiresAt).toBeUndefined();
    pass(3600);
    expect((await api.get('claims/lease-p1')).body.status.value).toBe(made.status.value);
    expectFailure(await api.post('claims/lease-p1/renew', undefined), 409, 'Conflict');
  });
});

describe('expiry', () => {
  it('is gone to reads and lists at once; the read deletes it, its value is reclaimed, Claim Expired', async () => {
    await api.post('indexpools', indexPool('lease-x', ['7..7']));
    const made = await leased('lease-x1', 'lease-x', 60);
    pass(61);
    const listed = await api.get('claims');
    expect(listed.body.items.map((item: any) => item.metadata.name)).not.toContain('lease-x1');
    expectFailure(await api.get('claims/lease-x1'), 404, 'NotFound');
    expectFailure(await api.post('claims/lease-x1/renew', undefined), 404, 'NotFound');
    await drained();
    // Its value is free again (Recycle): the next claim gets it.
    const next = await api.post('claims', claim('lease-x2', ref('lease-x')));
    expect(next.body.status.value).toBe('7');
    expectExpiredOnce('lease-x1');
    // Who held 7: lease-x1, until its lease ended (a release, where records are on DynamoDB Local's clock).
    await eventually(async () => {
      const items = (await api.get('claims/lease-x1/history')).body.items;
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({
        value: '7',
        ended: recordsOnOurClock ? 'Expired' : expect.any(String),
      });
      expect(['Expired', 'Released']).toContain(items[0].ended);
    });
    if (recordsOnOurClock)
      expect(eventsOf('Claim Expired', 'lease-x1')[0]?.detail).toMatchObject({
        claim: { name: 'lease-x1', uid: made.metadata.uid },
        value: '7',
        leaseExpiresAt: made.status.leaseExpiresAt,
      });
  });

  it('a repeat PUT of the name makes a new claim; a DELETE finds none', async () => {
    await api.post('indexpools', indexPool('lease-n', ['1..3']));
    const made = await leased('lease-n1', 'lease-n', 60);
    await leased('lease-n2', 'lease-n', 60);
    pass(120);
    const again = await api.put('claims/lease-n1', claim('lease-n1', ref('lease-n'), { leaseSeconds: 60 }));
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.metadata.uid).not.toBe(made.metadata.uid);
    expectFailure(await api.delete('claims/lease-n2'), 404, 'NotFound');
    await poolSettles('lease-n', 1);
    expectExpiredOnce('lease-n2');
  });

  it('the repair sweep deletes the expired claims it finds', async () => {
    await api.post('indexpools', indexPool('lease-s', ['1..3']));
    await leased('lease-s1', 'lease-s', 60);
    // The stream done with the claim's records first, as in the TTL test below: else it may delete the
    // claim itself before the sweep finds it.
    await drained();
    pass(61);
    const sweep = await api.post('repair', undefined);
    expect(sweep.status, JSON.stringify(sweep.body)).toBe(200);
    expect(sweep.body.fixed.expiredLease).toBeGreaterThanOrEqual(1);
    await poolSettles('lease-s', 0);
    expectExpiredOnce('lease-s1');
  });

  it("the repair function's expiry run (every minute, deployed) finds ended leases by the leases index", async () => {
    await api.post('indexpools', indexPool('lease-e', ['1..3']));
    await leased('lease-e1', 'lease-e', 60);
    const later = await leased('lease-e2', 'lease-e', 600);
    // The stream done with the claims' records first, as in the TTL test below: else it may delete
    // lease-e1 itself before the expiry run finds it.
    await drained();
    const expiry = createRepairHandler({ table: allot.table });
    // The item as stored, whatever a read would make of it (a read of an expired claim deletes it).
    const stored = (name: string) =>
      allot.table.get<{ metadata: { uid: string } }>(objectKey('default', 'claims', name));
    pass(30);
    await expiry({ operation: 'expireLeases' });
    expect(await stored('lease-e1')).toBeDefined();
    pass(31);
    const run = (await expiry({ operation: 'expireLeases' })) as { kind: string; expired: number };
    expect(run.kind).toBe('LeaseExpiry');
    expect(run.expired).toBeGreaterThanOrEqual(1);
    expect(await stored('lease-e1')).toBeUndefined();
    await poolSettles('lease-e', 1);
    expectExpiredOnce('lease-e1');
    // A renewal moves the lease in the index: its old end finds nothing.
    pass(500);
    expect((await api.post('claims/lease-e2/renew', undefined)).status).toBe(200);
    pass(100);
    await expiry({ operation: 'expireLeases' });
    expect((await stored('lease-e2'))?.metadata.uid).toBe(later.metadata.uid);
  });

  it("the TTL emulation deletes it with TTL's identity, and the stream reclaims the value", async () => {
    await api.post('indexpools', indexPool('lease-t', ['4..4']));
    await leased('lease-t1', 'lease-t', 60);
    // The stream done with the claim's records first: working on one after the clock moved past the end,
    // it would delete the claim itself (as any reader does), before TTL could.
    await drained();
    pass(30);
    expect(await allot.ttl!.expireDue()).toBe(0);
    pass(32); // TTL deletes once its time is strictly before now (whole seconds)
    expect(await allot.ttl!.expireDue()).toBeGreaterThanOrEqual(1);
    await poolSettles('lease-t', 0);
    expect(eventsOf('Claim Expired', 'lease-t1')).toHaveLength(1);
    expect((await api.post('claims', claim('lease-t2', ref('lease-t')))).body.status.value).toBe('4');
  });

  it('a renewal after the end is too late: 404, and the claim is gone', async () => {
    await api.post('indexpools', indexPool('lease-l', ['1..3']));
    await leased('lease-l1', 'lease-l', 60);
    pass(62);
    expectFailure(await api.post('claims/lease-l1/renew', undefined), 404, 'NotFound');
    pass(-62);
    expectFailure(await api.get('claims/lease-l1'), 404, 'NotFound');
  });
});
