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

/*
 * Pools shared with other namespaces (api.md, "Pools shared with other namespaces"): the pools live in an
 * owner's namespace, claims in tenants' namespaces too. Items are told apart by the namespace in their key.
 */

/** The namespace an item lives in, from its key (`O#<ns>#…`, `A#<ns>#…`, `Q#<ns>#…`). */
export const namespaceOf = (item: Item): string => item.pk.split('#')[1]!;

/** The namespace of the claim an allocation object names: its claimRef's, else the object's own. */
export const claimNamespaceOf = (allocation: Item): string =>
  (allocation.spec.claimRef?.namespace as string | undefined) ?? namespaceOf(allocation);

/** A claim as a sentence names it: `acme/c0`. */
const claimText = (claim: Item) => `${namespaceOf(claim)}/${claim.metadata.name}`;

/**
 * The most values of a pool a namespace may hold now: undefined when the pool is not shared with it, and
 * Infinity for the pool's own namespace or an entry without maxAllocations. A named entry wins over "*".
 */
export function shareLimit(pool: Item, namespace: string): number | undefined {
  if (namespaceOf(pool) === namespace) return Infinity;
  const entries = (pool.spec.sharedWith ?? []) as { namespace: string; maxAllocations?: number }[];
  const entry = entries.find((e) => e.namespace === namespace) ?? entries.find((e) => e.namespace === '*');
  return entry ? (entry.maxAllocations ?? Infinity) : undefined;
}

const sameClaimPool = (allocation: Item, pool: Item) =>
  namespaceOf(allocation) === namespaceOf(pool) && allocation.spec.poolRef.name === pool.metadata.name;

/** A pool's objects held by live claims of a namespace: its claimRef's namespace, and a live claim's uid. */
export function heldBy(snapshot: Snapshot, pool: Item, namespace: string): Item[] {
  const live = new Set(
    snapshot.claims.filter((claim) => namespaceOf(claim) === namespace).map((claim) => claim.metadata.uid),
  );
  return snapshot.allocations.filter(
    (allocation) =>
      sameClaimPool(allocation, pool) &&
      claimNamespaceOf(allocation) === namespace &&
      live.has(allocation.spec.claimRef?.uid),
  );
}

/** A namespace's places among a pool's holders (lib/store/quotas.ts). */
export function placesOf(snapshot: Snapshot, pool: Item, namespace: string): string[] {
  const item = (snapshot.quotas ?? []).find(
    (quota) =>
      quota.pk === `Q#${namespaceOf(pool)}#${pool.kind ?? 'IndexPool'}#${pool.metadata.name}` &&
      quota.sk === namespace,
  );
  return item?.holders ? [...(item.holders as Iterable<string>)] : [];
}

/**
 * What must hold after every step: no tenant holds more values of a pool (objects bound to its live
 * claims, one per place), nor more places among its holders, than `ceiling` allows (the most the namespace may hold:
 * the highest limit in force since it last held no more than its limit, as a lowered limit takes
 * nothing back).
 */
export function quotaViolations(
  snapshot: Snapshot,
  tenants: readonly string[],
  ceiling: (pool: string, namespace: string) => number,
): string[] {
  const violations: string[] = [];
  for (const pool of snapshot.pools) {
    const name = pool.metadata.name as string;
    for (const tenant of tenants) {
      const most = ceiling(name, tenant);
      // A write whose answer was lost leaves its attempt a second object under the same place, which the
      // stream deletes as a lost race's: the values held are counted by place.
      const held = heldBy(snapshot, pool, tenant);
      const count = new Set(held.map((a) => (a.holder as string | undefined) ?? `${a.pk}|${a.sk}`)).size;
      if (count > most)
        violations.push(
          `namespace ${tenant} holds ${count} values of ${name} (${held
            .map((a) => `${a.value} for ${a.spec.claimRef.name}${a.holder ? ` in place ${a.holder}` : ''}`)
            .join(', ')}), more than its limit ${most}`,
        );
      const places = placesOf(snapshot, pool, tenant);
      if (places.length > most)
        violations.push(
          `namespace ${tenant} has ${places.length} places among ${name}'s holders, limit ${most}`,
        );
    }
  }
  return violations;
}

/**
 * What a tenant was answered names nothing of another namespace: no other tenant's name (their claims'
 * names carry it), no uid of a claim of another namespace; and a list of the tenant's own namespace
 * (`ownItems`) holds only items of that namespace.
 */
export function isolationViolations(
  tenant: string,
  what: string,
  body: unknown,
  others: { namespaces: readonly string[]; uids: Iterable<string> },
  ownItems = false,
): string[] {
  const violations: string[] = [];
  const text = JSON.stringify(body) ?? '';
  for (const namespace of others.namespaces)
    if (namespace !== tenant && text.includes(namespace))
      violations.push(`${what} answered ${tenant} a text naming namespace ${namespace}: ${text}`);
  for (const uid of others.uids)
    if (text.includes(uid))
      violations.push(`${what} answered ${tenant} the uid ${uid} of another namespace's claim`);
  const items = (body as { items?: unknown })?.items;
  if (ownItems && Array.isArray(items))
    for (const item of items as { metadata?: { name?: string; namespace?: string } }[])
      if (item.metadata?.namespace !== tenant)
        violations.push(
          `${what} listed to ${tenant} ${item.metadata?.name} of namespace ${item.metadata?.namespace}`,
        );
  return violations;
}

/** Whether a value of a pool fits a claim's spec.value and spec.within. */
function fitsClaim(claim: Item, value: number): boolean {
  if (claim.spec.value !== undefined && value !== Number(claim.spec.value)) return false;
  if (claim.spec.within === undefined) return true;
  const [a, b] = String(claim.spec.within).split('..').map(Number);
  return value >= a! && value <= b!;
}

/**
 * What must hold once the stream has delivered everything (and any sweep the drain ran): every claim
 * holds one object or none as its phase says; each pool's counts and `status.sharing` agree with a
 * recount; each namespace's places are exactly the places its Allocated claims record; and no claim waits
 * that could be allocated (under its namespace's limit with a value free), nor waits PoolNotFound for a
 * pool that serves it, nor waits for any other reason for a pool that does not.
 */
export async function sharedDrainedViolations(
  world: World,
  snapshot: Snapshot,
  tenants: readonly string[],
): Promise<string[]> {
  const violations = alwaysViolations(snapshot);
  const live = new Set(snapshot.claims.map((claim) => claim.metadata.uid as string));
  for (const claim of snapshot.claims) {
    const mine = snapshot.allocations.filter((a) => a.spec.claimRef?.uid === claim.metadata.uid);
    const expected = claim.phase === 'Allocated' ? 1 : 0;
    if (mine.length !== expected)
      violations.push(`claim ${claimText(claim)} is ${claim.phase} and bound to ${mine.length} objects`);
    if (claim.phase === 'Allocating') violations.push(`claim ${claimText(claim)} is still Allocating`);
  }
  for (const allocation of snapshot.allocations) {
    const uid = allocation.spec.claimRef?.uid;
    if (uid && !live.has(uid))
      violations.push(
        `${allocation.metadata.name} is still bound to deleted claim ${claimNamespaceOf(allocation)}/${allocation.spec.claimRef.name}`,
      );
  }
  for (const pool of snapshot.pools) {
    const name = pool.metadata.name as string;
    const owner = namespaceOf(pool);
    const candidates = candidatesOf(pool);
    const objects = snapshot.allocations.filter((a) => sameClaimPool(a, pool));
    const sameKeyPool = (item: Item) => namespaceOf(item) === owner && item.poolRef.name === name;
    const taken = new Set([
      ...objects.map((a) => Number(a.value)),
      ...snapshot.holds.filter(sameKeyPool).map((hold) => Number(hold.value)),
      ...snapshot.quarantines.filter(sameKeyPool).map((q) => Number(q.value)),
    ]);
    const free = candidates.filter((value) => !taken.has(value));
    const counts = new Map(tenants.map((tenant) => [tenant, heldBy(snapshot, pool, tenant).length]));
    // status: the counts, and each namespace's usage (its entry, or values it holds) with its limit.
    const shown = (await world.observe(`/v1/namespaces/${owner}/indexpools/${name}`)).body?.status ?? {};
    const expected = {
      allocated: objects.length,
      total: String(candidates.length),
      free: String(free.length),
      sharing: [
        ...new Set([
          ...((pool.spec.sharedWith ?? []) as { namespace: string }[])
            .map((e) => e.namespace)
            .filter((n) => n !== '*'),
          ...tenants.filter((tenant) => counts.get(tenant)! > 0),
        ]),
      ]
        .sort()
        .map((namespace) => {
          const limit = shareLimit(pool, namespace);
          return {
            namespace,
            allocated: counts.get(namespace) ?? 0,
            ...(limit !== undefined && limit !== Infinity && { maxAllocations: limit }),
          };
        }),
    };
    const seen = { allocated: shown.allocated, total: shown.total, free: shown.free, sharing: shown.sharing };
    if (JSON.stringify(seen) !== JSON.stringify(expected))
      violations.push(
        `pool ${name} shows ${JSON.stringify(seen)}, a recount gives ${JSON.stringify(expected)}`,
      );
    // The places: one per Allocated claim of the namespace holding a value of the pool, the one it records.
    for (const tenant of tenants) {
      const recorded = snapshot.claims
        .filter(
          (claim) =>
            namespaceOf(claim) === tenant &&
            claim.phase === 'Allocated' &&
            claim.spec.poolRef.namespace === owner &&
            claim.spec.poolRef.name === name,
        )
        .map((claim) => String(claim.holder))
        .sort();
      const places = placesOf(snapshot, pool, tenant).sort();
      if (JSON.stringify(places) !== JSON.stringify(recorded))
        violations.push(
          `namespace ${tenant}'s places among ${name}'s holders are ${JSON.stringify(places)}, its Allocated claims record ${JSON.stringify(recorded)}`,
        );
    }
  }
  for (const claim of snapshot.claims) {
    if (claim.phase !== 'Waiting') continue;
    const namespace = namespaceOf(claim);
    const poolNamespace = (claim.spec.poolRef.namespace as string | undefined) ?? namespace;
    const reason = claim.status.conditions?.[0]?.reason;
    const pool = snapshot.pools.find(
      (item) => namespaceOf(item) === poolNamespace && item.metadata.name === claim.spec.poolRef.name,
    );
    // A pool a cascade marked and did not finish deleting (its request died) is gone to claims until a
    // retry finishes it (lib/service/operations/pools.ts deletePool).
    const limit = pool && pool.deleting === undefined ? shareLimit(pool, namespace) : undefined;
    if (limit === undefined) {
      if (reason !== 'PoolNotFound')
        violations.push(`claim ${claimText(claim)} waits (${reason}) for a pool that does not serve it`);
      continue;
    }
    if (reason === 'PoolNotFound')
      violations.push(
        `claim ${claimText(claim)} waits PoolNotFound for ${pool!.metadata.name}, shared with it`,
      );
    const held = poolNamespace === namespace ? 0 : heldBy(snapshot, pool!, namespace).length;
    const objects = snapshot.allocations.filter((a) => sameClaimPool(a, pool!));
    const taken = new Set([
      ...objects.map((a) => Number(a.value)),
      ...snapshot.holds
        .filter((h) => namespaceOf(h) === poolNamespace && h.poolRef.name === pool!.metadata.name)
        .map((h) => Number(h.value)),
      ...snapshot.quarantines
        .filter((q) => namespaceOf(q) === poolNamespace && q.poolRef.name === pool!.metadata.name)
        .map((q) => Number(q.value)),
    ]);
    const fits = candidatesOf(pool!).filter((value) => !taken.has(value) && fitsClaim(claim, value));
    if (held < limit && fits.length > 0)
      violations.push(
        `claim ${claimText(claim)} waits (${reason}) although its namespace holds ${held} of ${limit} values of ${pool!.metadata.name} and ${fits.slice(0, 3).join(', ')} is free`,
      );
  }
  return violations;
}
