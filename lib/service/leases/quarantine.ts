/**
 * Quarantine (api.md, "Pools": `quarantineSeconds`; docs/leases.md): a value freed in a Recycle pool is
 * held back for that long before it is handed out again, because the last tenant's address or number
 * still sits in ARP caches, DNS, firewall rules and BGP sessions.
 *
 * When the stream function works on an allocation object's REMOVE (a release, an expiry, a delete by
 * hand), it puts a quarantine item at the freed key before the counts see the slot (stream/batch.ts
 * works before it counts), so the slot's bit never clears: the search, the preview and `free` see the
 * value held and the claim path pays nothing more. The put is conditional on the key being empty, so a
 * claim that took the value in the moment between the delete and the put keeps it (docs/leases.md says
 * so). The quarantine ends at `until`: TTL deletes it, or the expiry run (every minute) does, within 2
 * minutes; its REMOVE frees the bit and wakes waiting claims, as an object's does.
 */
import type { AllocationKind } from '../../domain/kinds.ts';
import { leaseEnd } from '../../domain/objects/leases.ts';
import type {
  AllocationRecord,
  ItemKey,
  PoolRecord,
  QuarantineRecord,
} from '../../domain/objects/records.ts';
import { nowMs, nowText, type ClaimContext } from '../context.ts';

/** How long the pool holds a freed value back: 0 for none (a Retain pool keeps its objects anyway). */
export function quarantineOf(pool: PoolRecord | undefined): number {
  if (pool?.t !== 'pool' || pool.spec.reclaimPolicy !== 'Recycle') return 0;
  return typeof pool.spec.quarantineSeconds === 'number' ? pool.spec.quarantineSeconds : 0;
}

/**
 * Holds the value of an object that went back, if its pool quarantines: the object itself, or (the repair
 * sweep, whose object's REMOVE was lost) what the pool and the freed key say. Whether a quarantine was put.
 */
export async function quarantineFreed(
  ctx: ClaimContext,
  pool: PoolRecord | undefined,
  key: ItemKey,
  freed: AllocationRecord | { kind: AllocationKind; value: string },
): Promise<boolean> {
  const seconds = quarantineOf(pool);
  if (!pool || seconds === 0 || pool.spec.allocationPrefixLengths !== undefined) return false;
  const object = 'metadata' in freed ? freed : undefined;
  const quarantine: QuarantineRecord = {
    t: 'quarantine',
    kind: freed.kind,
    metadata: {
      name: object?.metadata.name ?? '',
      namespace: pool.metadata.namespace,
      uid: object?.metadata.uid ?? '',
    },
    poolRef: { kind: pool.kind, name: pool.metadata.name },
    value: freed.value,
    since: nowText(ctx),
    until: leaseEnd(nowMs(ctx), seconds),
  };
  return ctx.table.quarantines.put(key, quarantine);
}

/** Ends a quarantine whose time has come by the context's clock; false when it was not over, or changed or went first. */
export function endQuarantine(
  ctx: ClaimContext,
  key: ItemKey,
  quarantine: QuarantineRecord,
): Promise<boolean> {
  if (Date.parse(quarantine.until) > nowMs(ctx)) return Promise.resolve(false);
  return ctx.table.quarantines.end(key, quarantine.until, nowText(ctx));
}
