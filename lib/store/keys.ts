/**
 * Every key format of the one table (`pk`/`sk`), pure: testable without a store.
 *
 * - pools and claims: `O#<ns>#<resource>#<shard>` / `<name>`. The shard (a hash of the name, 0..7)
 *   spreads one namespace's writes over eight partition keys; a list merges the eight.
 * - allocation objects: `A#<ns>#<poolKind>#<pool>#<family><block>` / `<slot>`: the pool and the value
 *   (in sortable hex) are the key, so `attribute_not_exists(pk)` on a put is the arbiter of every race.
 *   A block holds 64 consecutive slots: a claim reads one block to find a free value, and concurrent
 *   claims spread their writes over blocks.
 * - a group's summary (4096 slots), kept by the stream function: `A#<ns>#<poolKind>#<pool>#<family>G<group>`
 *   / `~` (its shape: items.ts); and a pool's directory of summarised groups, `D#<ns>#<poolKind>#<pool>` /
 *   `<family><group>`, written once per group, so a recount finds every summary without a Scan.
 * - names of pre-provisioned allocation objects that are not the deterministic one:
 *   `N#<ns>#<resource>#<name>` / `N`, pointing at the allocation's key.
 * Indexes (schema.ts):
 * - `allocations` (gpk `<ns>#<resource>#<slot mod 8>`, gsk `<pool>#<slot>`, all attributes): lists,
 *   `?pool=`, cascade and recounts, without a Scan; eight shards again so no key takes every write.
 * - `waiting` (wpk `<ns>#<poolKind>#<pool>`, wsk `<created>#<name>`, keys only): claims that wait for a
 *   pool, present only while they wait (a sparse index).
 */
import { poolKindInfo, type AllocationKind, type PoolKind, type Resource } from '../domain/kinds.ts';
import type { ItemKey } from '../domain/objects/records.ts';
import { slotWidth, valueKind } from '../domain/values/spaces.ts';
import type { ParsedValue } from '../domain/values/values.ts';
import { leaseEpochSeconds } from '../domain/objects/leases.ts';
import { TTL_ATTRIBUTE } from './schema.ts';

export const LIST_SHARDS = 8;
/** log2 of the slots in one block partition. */
export const BLOCK_BITS = 6n;
/** FNV-1a, so a name's shard is the same in every process and language. */
export function shardOf(text: string, shards = LIST_SHARDS): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

export function objectKey(namespace: string, resource: Resource, name: string): ItemKey {
  return { pk: `O#${namespace}#${resource}#${shardOf(name)}`, sk: name };
}

export interface PoolId {
  namespace: string;
  kind: PoolKind;
  name: string;
}

/** Where a pool lives. */
export function poolKeyOf(pool: PoolId): ItemKey {
  return objectKey(pool.namespace, poolKindInfo(pool.kind)!.resource, pool.name);
}

/** Where an allocation of `value` in a pool lives: its key, and its entry in the `allocations` index. */
export function allocationKey(
  pool: PoolId,
  allocationKind: AllocationKind,
  value: Pick<ParsedValue, 'slot' | 'family'>,
): ItemKey {
  return { pk: blockPk(pool, value.family, value.slot >> BLOCK_BITS), sk: slotKey(allocationKind, value) };
}

function blockPk(pool: PoolId, family: 4 | 6 | undefined, block: bigint): string {
  const tag = family === undefined ? '' : `v${family}.`;
  return `A#${pool.namespace}#${pool.kind}#${pool.name}#${tag}${block.toString(16)}`;
}

function slotKey(allocationKind: AllocationKind, value: Pick<ParsedValue, 'slot' | 'family'>): string {
  return value.slot.toString(16).padStart(slotWidth(allocationKind, value.family), '0');
}

export function allocationIndexKeys(
  namespace: string,
  resource: Resource,
  pool: string,
  slot: bigint,
  sk: string,
): { gpk: string; gsk: string } {
  return { gpk: `${namespace}#${resource}#${Number(slot % BigInt(LIST_SHARDS))}`, gsk: `${pool}#${sk}` };
}

/** log2 of the slots one group summary covers: 4096 slots, a 512-byte bitmap. */
export const GROUP_BITS = 12n;

/** A group of a pool's slot space: the unit the stream function summarises (service/counts/tally.ts). */
export interface GroupRef {
  family: 4 | 6 | undefined;
  group: bigint;
}

const SUMMARY_SK = '~';

export function groupKey(pool: PoolId, ref: GroupRef): ItemKey {
  const tag = ref.family === undefined ? '' : `v${ref.family}.`;
  return {
    pk: `A#${pool.namespace}#${pool.kind}#${pool.name}#${tag}G${ref.group.toString(16)}`,
    sk: SUMMARY_SK,
  };
}

export function directoryKey(pool: PoolId, ref?: GroupRef): ItemKey {
  const sk = ref
    ? `${ref.family === undefined ? '' : `v${ref.family}.`}${ref.group.toString(16).padStart(32, '0')}`
    : '';
  return { pk: `D#${pool.namespace}#${pool.kind}#${pool.name}`, sk };
}

/**
 * A pool carved from a claim (`prefixesFrom`): `C#<ns>#<claim>` / `<pool resource>#<pool>`, written
 * before the pool and deleted after it, so a claim's DELETE finds the pools that use its value (409
 * ClaimInUse) and the stream function the pools to give it to, with one Query.
 */
export function carvingKey(namespace: string, claim: string, resource?: Resource, pool?: string): ItemKey {
  return { pk: `C#${namespace}#${claim}`, sk: resource === undefined ? '' : `${resource}#${pool}` };
}

/**
 * One namespace's holders of one shared pool (store/quotas.ts): `Q#<pool ns>#<poolKind>#<pool>` / `<claim ns>`,
 * so the pool's read of its sharing is one Query, and a claim's quota one conditional write on its own
 * namespace's item.
 */
export function holdersKey(pool: PoolId, namespace?: string): ItemKey {
  return { pk: `Q#${pool.namespace}#${pool.kind}#${pool.name}`, sk: namespace ?? '' };
}

/**
 * Where a namespace finds the pools of other namespaces shared with it (`allot get pools`, the tenant's
 * `sharedpools` route): `S#<namespace or *>` / `<pool ns>#<poolKind>#<pool>`, written before the pool
 * names the namespace and deleted after it stops; a read checks each pool's spec, so a leftover is
 * never shown.
 */
export function shareKey(namespace: string, pool?: PoolId): ItemKey {
  return { pk: `S#${namespace}`, sk: pool ? `${pool.namespace}#${pool.kind}#${pool.name}` : '' };
}

export function nameKey(namespace: string, resource: Resource, name: string): ItemKey {
  return { pk: `N#${namespace}#${resource}#${name}`, sk: 'N' };
}

/**
 * Where a namespace's pending name holds are listed in the sparse `waiting` index, until confirmed: the
 * repair sweep finds one whose request died and whose stream record was lost. (`~` is in no pool kind.)
 */
export function pendingHoldsKey(namespace: string): string {
  return `${namespace}#~holds`;
}

export function waitingKey(pool: PoolId): string {
  return `${pool.namespace}#${pool.kind}#${pool.name}`;
}

/**
 * Where a list goes on, in its `continue` token (opaque to clients): after the sort key `after`, at the
 * first page's resourceVersion `rv`; across every namespace, in namespace `ns` (or the one after it,
 * `next`).
 */
export interface ContinueToken {
  after?: string;
  rv?: number;
  ns?: string;
  next?: boolean;
}

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token), 'utf8').toString('base64url');
}

export function decodeContinue(token: string): ContinueToken | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const { after, rv, ns, next } = parsed as Record<string, unknown>;
    if (after !== undefined && typeof after !== 'string') return undefined;
    if (rv !== undefined && !(typeof rv === 'number' && Number.isSafeInteger(rv) && rv >= 0))
      return undefined;
    if (ns !== undefined && typeof ns !== 'string') return undefined;
    if (next !== undefined && next !== true) return undefined;
    if (after === undefined && ns === undefined) return undefined;
    return { after, rv, ns, next };
  } catch {
    return undefined; // a malformed token is the caller's 400
  }
}

/**
 * The namespace registry: one item per namespace that ever had a pool (written when a pool is created),
 * or a claim or allocation object made without its pool (lists across every namespace read it too),
 * so the repair sweep finds the namespaces to sweep with one Query instead of a Scan.
 */
export const NAMESPACES_PK = 'R#namespaces';

export function namespaceKey(namespace: string): ItemKey {
  return { pk: NAMESPACES_PK, sk: namespace };
}

/** Where the repair sweep keeps how far it got in a namespace, while a sweep spans several runs. */
export function repairCursorKey(namespace: string): ItemKey {
  return { pk: 'R#repair', sk: namespace };
}

/**
 * A namespace's history of one resource, kept by the history function for watches
 * (service/history/changes.ts): `W#<ns>#<resource>` / the entry's sequence number, 15 digits, and `~`, the
 * head (the highest number appended), which outlives the entries.
 */
export function historyPk(namespace: string, resource: Resource): string {
  return `W#${namespace}#${resource}`;
}

export const HISTORY_HEAD_SK = '~';

export function historySk(seq: number): string {
  return String(seq).padStart(15, '0');
}

/**
 * A collection's objects as its history last had them, one item each by name (service/history/snapshot.ts):
 * `WI#<ns>#<resource>` / the object's name.
 */
export function historyIndexPk(namespace: string, resource: Resource): string {
  return `WI#${namespace}#${resource}`;
}

/** A batch of stream records the history function started on, by its first record: `WB#<eventID>` / `B`. */
export function historyBatchKey(eventId: string): ItemKey {
  return { pk: `WB#${eventId}`, sk: 'B' };
}

/** The leases index's partitions: items spread by key, as the lists are. */
export const leaseShardKey = (shard: number) => `L#${shard}`;

/**
 * An item that ends by itself (a lease's claim, a quarantine): its end as the TTL attribute (epoch
 * seconds), and its entry in the leases index, where the expiry run finds it (service/leases/leases.ts).
 */
export function leaseAttributes(key: ItemKey, endsAt: string) {
  return {
    [TTL_ATTRIBUTE]: leaseEpochSeconds(endsAt),
    lpk: leaseShardKey(shardOf(`${key.pk}\u0000${key.sk}`)),
    lsk: `${endsAt}#${key.pk}#${key.sk}`,
  };
}

/**
 * A value's holdings (store/holdings.ts), three ways: by the pool sorted by value
 * (`HV#<pool ns>#<kind>#<pool>` / `<sortable value>#<start, inverted>`: a value's holdings and a range's
 * are one Query, each value's newest first), by the pool sorted by time (`HP#<pool ns>#<kind>#<pool>` /
 * `<start>#<value>`) and by the claim's name (`HC#<claim ns>#<claim>` / `<start>#<pool id>#<value>`), and
 * while it lasts a fourth item among the pool's open holdings (`HO#…`). A holding for a claim of another
 * namespace than the pool's (a shared pool's tenant) has the pool's two again under that namespace
 * (`HTV#…#<claim ns>`, `HTP#…#<claim ns>`), so a tenant reads its own with the same Queries. `<start>` is
 * when the holding started and the record that started it (`<from>#<sequence>`), so a partition reads
 * newest first, and a record delivered again names the holding it started.
 */
export function holdingKeys(
  pool: PoolId,
  value: string,
  claim: { namespace: string; name: string } | undefined,
  start: string,
): HoldingKeys {
  const id = holdingPoolId(pool);
  const byValueSk = `${holdingValueSortKey(pool.kind, value)}#${invertedStart(start)}`;
  const tenant = claim && claim.namespace !== pool.namespace ? claim.namespace : undefined;
  return {
    byValue: { pk: holdingValuePk(pool), sk: byValueSk },
    open: { pk: openHoldingsPk(pool), sk: `${value}#${start}` },
    byPool: { pk: holdingPoolPk(pool), sk: `${start}#${value}` },
    ...(claim
      ? { byClaim: { pk: `HC#${claim.namespace}#${claim.name}`, sk: `${start}#${id}#${value}` } }
      : {}),
    ...(tenant
      ? {
          tenant: [
            { pk: holdingValuePk(pool, tenant), sk: byValueSk },
            { pk: holdingPoolPk(pool, tenant), sk: `${start}#${value}` },
          ],
        }
      : {}),
  };
}

export interface HoldingKeys {
  byValue: ItemKey;
  byPool: ItemKey;
  byClaim?: ItemKey;
  /** A tenant's copies: by value, by time. */
  tenant?: [ItemKey, ItemKey];
  open: ItemKey;
}

const holdingPoolId = (pool: PoolId) => `${pool.namespace}#${pool.kind}#${pool.name}`;

/** The partition of a pool's holdings by value (`tenant`: of that namespace's claims only). */
export const holdingValuePk = (pool: PoolId, tenant?: string) =>
  tenant === undefined ? `HV#${holdingPoolId(pool)}` : `HTV#${holdingPoolId(pool)}#${tenant}`;

/** The partition of a pool's holdings by time (`tenant`: of that namespace's claims only). */
export const holdingPoolPk = (pool: PoolId, tenant?: string) =>
  tenant === undefined ? `HP#${holdingPoolId(pool)}` : `HTP#${holdingPoolId(pool)}#${tenant}`;

/**
 * A start with every digit turned (d → 9 − d): starts are fixed width, so the turned ones sort newest
 * first, and a value's holdings read newest first in a Query that reads values upward.
 */
export const invertedStart = (start: string) => start.replace(/[0-9]/g, (d) => String(9 - Number(d)));

/** An index as it sorts among holdings: 16 hex digits (as its allocation object's key). */
export const indexSortKey = (slot: bigint) => slot.toString(16).padStart(slotWidth('Index', undefined), '0');

/** An address as it sorts: its family, then its number in fixed-width hex (`v4.0a000007`). */
export const addressSortKey = (family: 4 | 6, bits: bigint) =>
  `v${family}.${bits.toString(16).padStart(slotWidth('IPAddress', family), '0')}`;

/**
 * A prefix as it sorts: its network as an address, then its length (3 digits), so the prefixes whose
 * network lies inside a CIDR are one run of keys, and those at one network go shortest first.
 */
export const prefixSortKey = (family: 4 | 6, network: bigint, length: number) =>
  `${addressSortKey(family, network)}/${String(length).padStart(3, '0')}`;

/** A holding's value as it sorts in its pool's `HV#` partition (text order is value order). */
export function holdingValueSortKey(kind: PoolKind, value: string): string {
  const allocationKind = poolKindInfo(kind)!.allocationKind;
  const read = valueKind(allocationKind).parse(value);
  // A stored value is canonical and reads; were one not to, it sorts after every value, still kept.
  if (!read.ok) return `~${value}`;
  const { slot, family, length } = read.value;
  if (allocationKind === 'Index' || family === undefined) return indexSortKey(slot);
  if (allocationKind === 'IPAddress' || length === undefined) return addressSortKey(family, slot);
  return prefixSortKey(family, slot << BigInt((family === 4 ? 32 : 128) - length), length);
}

/**
 * The prefix lengths a prefix pool's holdings were ever of (`HL#<pool id>` / `<family>/<length>`, put
 * when a holding starts): the lengths `?within=` reads the prefixes containing a CIDR at, one read each.
 */
export const holdingLengthsPk = (pool: PoolId) => `HL#${holdingPoolId(pool)}`;

/** Where a holding of a prefix pool marks its value's length (none for other pools). */
export function holdingLengthKey(pool: PoolId, value: string): ItemKey | undefined {
  if (pool.kind !== 'IPPrefixPool') return undefined;
  const read = valueKind('IPPrefix').parse(value);
  if (!read.ok || read.value.family === undefined || read.value.length === undefined) return undefined;
  return { pk: holdingLengthsPk(pool), sk: `${read.value.family}/${read.value.length}` };
}

/** A length mark's family and length. */
export function holdingLengthOf(sk: string): { family: 4 | 6; length: number } | undefined {
  const match = /^([46])\/([0-9]{1,3})$/.exec(sk);
  return match ? { family: Number(match[1]) as 4 | 6, length: Number(match[2]) } : undefined;
}

/** The pool's holdings that last (`HO#…`), one item each while it lasts: what the repair sweep compares. */
export const openHoldingsPk = (pool: PoolId) => `HO#${pool.namespace}#${pool.kind}#${pool.name}`;

/** The partition of the holdings of every claim named `name` in `namespace`, across pools. */
export const claimHoldingsPk = (namespace: string, name: string) => `HC#${namespace}#${name}`;

/** A holding's start in its keys: when, and the record's sequence number (40 digits: DynamoDB's longest). */
export const holdingStart = (from: string, sequence: string) => `${from}#${sequence.padStart(40, '0')}`;
