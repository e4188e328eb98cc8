/**
 * The invariants of issue 5, checked against the whole table (small IndexPools only, so candidates are
 * enumerated by brute force rather than computed the way lib/ computes them). Each returns the violations
 * it finds, as sentences; none is the pass. Not a test file.
 */
import { ALLOW_BINDING_ANNOTATION } from '../../lib/domain/kinds.ts';
import { parseRange } from '../../lib/domain/values/ranges.ts';
import type { Item, Snapshot, World } from './world.ts';

const keyText = (key: { pk: string; sk: string } | undefined) => (key ? `${key.pk}|${key.sk}` : '-');

/** A pool's candidates in order (IndexPools of a few dozen values). */
export function candidatesOf(pool: Item): number[] {
  const values: number[] = [];
  for (const range of pool.spec.ranges as unknown[]) {
    const parsed = parseRange(range);
    if (!parsed.ok) throw new Error(`stored range ${String(range)} does not parse`);
    for (let v = Number(parsed.value.first); v <= Number(parsed.value.last); v++) values.push(v);
  }
  return values;
}

function allocationsOf(snapshot: Snapshot, pool: string): Item[] {
  return snapshot.allocations.filter((allocation) => allocation.spec.poolRef.name === pool);
}

function bindableTo(allocation: Item, claim: Item): boolean {
  const ref = allocation.spec.claimRef;
  if (!ref || ref.name !== claim.metadata.name) return false;
  if (allocation.spec.poolRef.name !== claim.spec.poolRef.name) return false;
  if (ref.uid === claim.metadata.uid) return true;
  const annotation = allocation.metadata.annotations?.[ALLOW_BINDING_ANNOTATION];
  return annotation !== undefined && annotation !== 'false';
}

/** The pool and value an Index name stands for (`p1-7`: value 7 of p1), as the server parses it. */
function namedValue(name: string): { pool: string; value: number } | undefined {
  const match = /^(.+)-(0|[1-9][0-9]*)$/.exec(name);
  return match ? { pool: match[1]!, value: Number(match[2]) } : undefined;
}

/** What must hold after every step, whatever the stream has delivered so far. */
export function alwaysViolations(snapshot: Snapshot): string[] {
  const violations: string[] = [];
  // Names are unique per kind: no two objects share one, and no object has a name another holds.
  const names = new Map<string, string>();
  for (const allocation of snapshot.allocations) {
    const name = allocation.metadata.name as string;
    if (names.has(name)) violations.push(`two allocation objects are named ${name}`);
    names.set(name, allocation.metadata.uid);
  }
  for (const hold of snapshot.holds) {
    const holder = names.get(hold.metadata.name);
    if (holder !== undefined && holder !== hold.metadata.uid)
      violations.push(`name ${hold.metadata.name} is held for ${hold.metadata.uid} but ${holder} has it`);
  }
  const byPool = new Map<string, Set<string>>();
  for (const allocation of snapshot.allocations) {
    const pool = allocation.spec.poolRef.name as string;
    const values = byPool.get(pool) ?? new Set<string>();
    if (values.has(allocation.value))
      violations.push(`pool ${pool}: two allocation objects hold ${allocation.value}`);
    values.add(allocation.value);
    byPool.set(pool, values);
  }
  // No quarantined value is handed out: no claim says it holds a value its pool holds back.
  const heldBack = new Set(snapshot.quarantines.map((q) => `${q.poolRef.name}|${q.value}`));
  for (const claim of snapshot.claims) {
    if (claim.phase === 'Allocated' && heldBack.has(`${claim.spec.poolRef.name}|${claim.status.value}`))
      violations.push(`claim ${claim.metadata.name} holds ${claim.status.value}, which is quarantined`);
  }
  const held = new Map<string, string>();
  for (const claim of snapshot.claims) {
    if (claim.phase !== 'Allocated') continue;
    const name = claim.metadata.name;
    const allocation = snapshot.allocations.find(
      (item) => item.pk === claim.bound?.pk && item.sk === claim.bound?.sk,
    );
    if (!allocation) {
      violations.push(`claim ${name} is Allocated but its allocation object ${keyText(claim.bound)} is gone`);
      continue;
    }
    const ref = allocation.spec.claimRef;
    if (ref?.name !== name || ref?.uid !== claim.metadata.uid)
      violations.push(
        `claim ${name} holds ${allocation.metadata.name}, which is bound to ${JSON.stringify(ref)}`,
      );
    if (claim.status.value !== allocation.value)
      violations.push(
        `claim ${name} says ${claim.status.value}, its allocation object holds ${allocation.value}`,
      );
    if (claim.status.conditions?.[0]?.status !== 'True')
      violations.push(`claim ${name} is Allocated with condition ${JSON.stringify(claim.status.conditions)}`);
    const other = held.get(keyText(claim.bound));
    if (other) violations.push(`claims ${other} and ${name} hold the same allocation object`);
    held.set(keyText(claim.bound), name);
  }
  return violations;
}

/** What must hold once the stream has delivered everything (and every handler's deadline has passed). */
export async function drainedViolations(world: World, snapshot: Snapshot): Promise<string[]> {
  const violations = alwaysViolations(snapshot);
  const liveUids = new Map(snapshot.claims.map((claim) => [claim.metadata.uid as string, claim]));
  for (const claim of snapshot.claims) {
    const name = claim.metadata.name;
    const mine = snapshot.allocations.filter(
      (allocation) => allocation.spec.claimRef?.uid === claim.metadata.uid,
    );
    if (claim.phase === 'Allocated' && mine.length !== 1)
      violations.push(`claim ${name} is Allocated and bound to ${mine.length} allocation objects`);
    if (claim.phase !== 'Allocated' && mine.length > 0)
      violations.push(
        `claim ${name} is ${claim.phase} but ${mine.length} allocation object(s) are bound to it`,
      );
    if (claim.phase === 'Allocating') violations.push(`claim ${name} is still Allocating after the drain`);
  }
  for (const allocation of snapshot.allocations) {
    const uid = allocation.spec.claimRef?.uid;
    if (uid && !liveUids.has(uid))
      violations.push(
        `${allocation.metadata.name} is still bound to deleted claim ${allocation.spec.claimRef.name} (uid ${uid})`,
      );
  }
  // Every object whose name stands for another value holds that name, and every hold has its object:
  // no hold is left behind by a request that died, and none is pending once deadlines have passed.
  for (const allocation of snapshot.allocations) {
    const named = namedValue(allocation.metadata.name);
    if (!named || (named.pool === allocation.spec.poolRef.name && named.value === Number(allocation.value)))
      continue;
    const hold = snapshot.holds.find((item) => item.metadata.name === allocation.metadata.name);
    if (hold?.metadata.uid !== allocation.metadata.uid || hold?.state !== 'held')
      violations.push(`${allocation.metadata.name} has no name hold of its own: ${JSON.stringify(hold)}`);
  }
  for (const hold of snapshot.holds) {
    const object = snapshot.allocations.find(
      (item) => item.pk === hold.target.pk && item.sk === hold.target.sk,
    );
    if (object?.metadata.uid !== hold.metadata.uid)
      violations.push(`name hold ${hold.metadata.name} (${hold.state}) has no object`);
    const named = namedValue(hold.metadata.name);
    if (named?.pool !== hold.poolRef.name || named?.value !== Number(hold.value))
      violations.push(`name hold ${hold.metadata.name} holds ${hold.poolRef.name} ${hold.value}`);
  }
  for (const pool of snapshot.pools) {
    const name = pool.metadata.name as string;
    const candidates = candidatesOf(pool);
    const allocations = allocationsOf(snapshot, name);
    // A value whose name an object of another value holds is not free either (it is not handed out),
    // nor is one a quarantine holds back.
    const quarantined = snapshot.quarantines
      .filter((quarantine) => quarantine.poolRef.name === name)
      .map((quarantine) => Number(quarantine.value));
    const heldValues = new Set([
      ...allocations.map((allocation) => Number(allocation.value)),
      ...snapshot.holds.filter((hold) => hold.poolRef.name === name).map((hold) => Number(hold.value)),
      ...quarantined,
    ]);
    const free = candidates.filter((value) => !heldValues.has(value));
    const shown = await world.observe(`indexpools/${name}`);
    // status.quarantined is shown on a pool that quarantines, or still holds values back.
    const showsQuarantined = Number(pool.spec.quarantineSeconds ?? 0) > 0 || quarantined.length > 0;
    const expected = {
      allocated: allocations.length,
      total: String(candidates.length),
      free: String(free.length),
      ...(showsQuarantined && {
        quarantined: String(quarantined.filter((value) => candidates.includes(value)).length),
      }),
    };
    const status = shown.body?.status ?? {};
    const seen = { allocated: status.allocated, total: status.total, free: status.free };
    if (showsQuarantined) Object.assign(seen, { quarantined: status.quarantined });
    if (JSON.stringify(seen) !== JSON.stringify(expected))
      violations.push(
        `pool ${name} shows ${JSON.stringify(seen)}, a recount gives ${JSON.stringify(expected)}`,
      );
    for (const claim of snapshot.claims) {
      if (claim.spec.poolRef.name !== name || claim.phase !== 'Waiting') continue;
      const claimName = claim.metadata.name;
      const reason = claim.status.conditions?.[0]?.reason;
      if (reason === 'PoolNotFound')
        violations.push(`claim ${claimName} waits for pool ${name}, which exists`);
      const offer = allocations.find((allocation) => bindableTo(allocation, claim));
      if (offer)
        violations.push(`claim ${claimName} waits although ${offer.metadata.name} may be bound to it`);
      const fits = free.filter((value) => {
        if (claim.spec.value !== undefined && value !== Number(claim.spec.value)) return false;
        if (claim.spec.within === undefined) return true;
        const [a, b] = String(claim.spec.within).split('..').map(Number);
        return value >= a! && value <= b!;
      });
      if (fits.length > 0)
        violations.push(
          `claim ${claimName} waits (${reason}) although ${fits.slice(0, 3).join(', ')} of ${name} is free`,
        );
    }
  }
  const poolNames = new Set(snapshot.pools.map((pool) => pool.metadata.name));
  for (const claim of snapshot.claims) {
    if (claim.phase === 'Waiting' && !poolNames.has(claim.spec.poolRef.name)) {
      const reason = claim.status.conditions?.[0]?.reason;
      if (reason !== 'PoolNotFound')
        violations.push(
          `claim ${claim.metadata.name} waits (${reason}) for pool ${claim.spec.poolRef.name}, which does not exist`,
        );
    }
  }
  return violations;
}
