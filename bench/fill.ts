/**
 * Pools for the benchmark, and filling them with exactly the allocation objects claims would have written
 * (`newAllocation` for a stand-in claim `fill-<n>`, written with the table's batch writer), then letting the
 * stream function's pool refresh (`refreshPool`, lib/service/counts/tally.ts) set the pool's counts and search hint.
 *
 * Pools of 2^8 and 2^16 values are materialised whole. Half of 2^32 or 2^64 values cannot be, so for
 * those only a window is written, and the run says which:
 * - "first N taken": the window [N − W, N); the counts are written as the stream would write them for the
 *   whole fill (every value below N held, the hint at N), see `windowedCounts`.
 *   The claim path never reads below its hint; the run checks that no request touched a block below N − W.
 * - "N taken at random": a fresh pool per fill level, with a uniformly random fill of exactly
 *   floor(fill × W) values of the window [0, W); W is chosen so that the window keeps at least as many free
 *   values as the claims measured, which therefore never leave it (checked); the real `refreshPool`
 *   tallies the window.
 */
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ordinalOf, slotAt } from '../lib/domain/values/candidates.ts';
import { newAllocation } from '../lib/service/allocation/decide.ts';
import { poolKindInfo, type PoolKind, type PoolKindInfo } from '../lib/domain/kinds.ts';
import { spaceOf, timestamp } from '../lib/domain/objects/objects.ts';
import { refreshPool } from '../lib/service/stream/reconcile.ts';
import type { SlotChange } from '../lib/service/counts/tally.ts';
import type { ClaimRecord, ItemKey, PoolRecord } from '../lib/domain/objects/records.ts';
import { valueKind } from '../lib/domain/values/spaces.ts';
import { type Table } from '../lib/store/table.ts';
import type { ParsedValue, PoolSpace } from '../lib/domain/values/values.ts';
import { NAMESPACE, type Instance } from './instance.ts';
import { allocationKey, BLOCK_BITS, objectKey, poolKeyOf, type PoolId } from '../lib/store/keys.ts';
import { type ClaimContext } from '../lib/service/context.ts';

export type Pattern = 'first' | 'random';

export interface PoolShape {
  /** As reported: `index-2^16`. */
  label: string;
  /** As in scenario names: `index 2^16`. */
  title: string;
  kind: PoolKind;
  spec: Record<string, unknown>;
  /** Only a window can be materialised. */
  huge: boolean;
}

export const POOL_SHAPES: readonly PoolShape[] = [
  { label: 'index-2^8', title: 'index 2^8', kind: 'IndexPool', spec: { ranges: ['0..255'] }, huge: false },
  {
    label: 'index-2^16',
    title: 'index 2^16',
    kind: 'IndexPool',
    spec: { ranges: ['0..65535'] },
    huge: false,
  },
  {
    label: 'index-2^32',
    title: 'index 2^32',
    kind: 'IndexPool',
    spec: { ranges: ['0..4294967295'] },
    huge: true,
  },
  {
    label: 'ipv6-/64',
    title: 'IPv6 /64',
    kind: 'IPAddressPool',
    spec: { prefixes: ['2001:db8::/64'] },
    huge: true,
  },
];

/** Slots per block (the table's partition of a pool). */
const BLOCK = 1n << BLOCK_BITS;

/** The window of a "first N" fill of a huge pool: 16 blocks below N. */
export const FIRST_WINDOW = 16n * BLOCK;

/** What was written for the current fill. */
export interface Materialised {
  kind: 'whole' | 'window';
  /** Ordinals (positions in candidate order) of the window, [from, to). */
  from: string;
  to: string;
  /** Allocation objects written for the fill, this level. */
  items: number;
  /** The values taken, as the claims and counts see them (a window's fill stands for this many). */
  taken: string;
  note: string;
}

export class BenchPool {
  readonly info: PoolKindInfo;
  readonly id: PoolId;
  record!: PoolRecord;
  space!: PoolSpace;
  total = 0n;
  /** Held by the fill: every ordinal below this ("first N"; for a window, those below it stand as held). */
  private firstHeld = 0n;
  /** Held by a random fill: a prefix of `permutation`. */
  private randomHeld = 0;
  private permutation: number[] = [];
  /** "first" fills of huge pools: everything below this ordinal is held but not materialised. */
  virtualPrefix = 0n;
  /** Slot changes since the last refresh, in order: what the stream function's records would carry. */
  private changes: SlotChange[] = [];
  /** The window of a random fill of a huge pool, [0, randomWindow); 0 when the whole pool is the window. */
  randomWindow = 0n;
  materialised: Materialised | undefined;

  constructor(
    readonly shape: PoolShape,
    readonly pattern: Pattern,
    readonly name: string,
  ) {
    this.info = poolKindInfo(shape.kind)!;
    this.id = { namespace: NAMESPACE, kind: shape.kind, name };
  }

  get ref() {
    return { kind: this.shape.kind, name: this.name };
  }

  /** Creates the pool through the API and reads its stored record. */
  async create(admin: Instance): Promise<void> {
    const answer = await admin.call('POST', this.info.resource, {
      metadata: { name: this.name },
      spec: this.shape.spec,
    });
    if (answer.status !== 201) throw new Error(`creating pool ${this.name}: ${JSON.stringify(answer.body)}`);
    await this.reload(admin.table);
  }

  async reload(table: Table): Promise<void> {
    const record = await table.get<PoolRecord>(poolKeyOf(this.id));
    if (record?.t !== 'pool') throw new Error(`pool ${this.name} is gone`);
    this.record = record;
    this.space = spaceOf(record);
    this.total = this.space.total;
  }

  valueAt(ordinal: bigint): ParsedValue {
    const slot = slotAt(this.space.segments, ordinal);
    if (slot === undefined) throw new Error(`ordinal ${ordinal} is past the end of ${this.name}`);
    return this.space.valueAt(slot);
  }

  ordinalOfValue(value: string): bigint | undefined {
    const parsed = valueKind(this.info.allocationKind).parse(value);
    return parsed.ok ? ordinalOf(this.space.segments, parsed.value.slot) : undefined;
  }

  keyOfValue(value: string): ItemKey {
    const parsed = valueKind(this.info.allocationKind).parse(value);
    if (!parsed.ok) throw new Error(`${value}: ${parsed.problem}`);
    return allocationKey(this.id, this.info.allocationKind, parsed.value);
  }

  /** The allocation items' partition key of a block, and the block an ordinal lies in. */
  blockPrefix(): string {
    const family = this.valueAt(0n).family;
    return `A#${NAMESPACE}#${this.shape.kind}#${this.name}#${family === undefined ? '' : `v${family}.`}`;
  }

  blockOf(ordinal: bigint): bigint {
    return this.valueAt(ordinal).slot >> BLOCK_BITS;
  }

  /** Whether the fill holds the value (so a claim that got it would be a duplicate). */
  filled(ordinal: bigint): boolean {
    if (this.pattern === 'first') return ordinal < this.firstHeld;
    if (ordinal >= BigInt(this.permutation.length)) return false;
    return this.heldSet().has(Number(ordinal));
  }

  private heldCache: { size: number; set: Set<number> } | undefined;
  private heldSet(): Set<number> {
    if (this.heldCache?.size !== this.randomHeld) {
      this.heldCache = { size: this.randomHeld, set: new Set(this.permutation.slice(0, this.randomHeld)) };
    }
    return this.heldCache.set;
  }

  /**
   * Brings the fill to `fraction` of the pool (growing only: each level adds to the last, and the measured
   * claims are deleted between levels, so the state is exactly the stated fill).
   */
  async fill(table: Table, fraction: number, randomWindow: bigint): Promise<void> {
    const per10k = BigInt(Math.round(fraction * 10_000));
    if (this.pattern === 'first') {
      const target = (this.total * per10k) / 10_000n;
      if (!this.shape.huge) {
        const written = await this.write(table, range(this.firstHeld, target));
        this.firstHeld = target;
        this.materialised = {
          kind: 'whole',
          from: '0',
          to: target.toString(),
          items: written,
          taken: target.toString(),
          note: `values at ordinals [0, ${target}) held, all materialised`,
        };
        return;
      }
      const from = target > FIRST_WINDOW ? target - FIRST_WINDOW : 0n;
      const written = await this.write(table, range(from > this.firstHeld ? from : this.firstHeld, target));
      this.firstHeld = target;
      this.virtualPrefix = from;
      this.materialised = {
        kind: target === 0n ? 'whole' : 'window',
        from: from.toString(),
        to: target.toString(),
        items: written,
        taken: target.toString(),
        note:
          target === 0n
            ? 'empty pool'
            : `first ${target} values taken; only [${from}, ${target}) materialised, the counts written as ` +
              `the stream would for all ${target} (allocated = held = searchFrom = ${target})`,
      };
      return;
    }
    // Random: a prefix of one random permutation of the window, so each level holds the last one's values.
    const window = this.shape.huge ? randomWindow : this.total;
    if (this.permutation.length === 0) this.permutation = shuffled(Number(window));
    this.randomWindow = this.shape.huge && per10k > 0n ? window : 0n;
    const target = Number((window * per10k) / 10_000n);
    const ordinals = this.permutation.slice(this.randomHeld, target).map((ordinal) => BigInt(ordinal));
    const written = await this.write(table, ordinals);
    this.randomHeld = target;
    this.materialised = {
      kind: this.shape.huge && target > 0 ? 'window' : 'whole',
      from: '0',
      to: (target > 0 ? window : this.total).toString(),
      items: written,
      taken: target.toString(),
      note:
        target === 0
          ? 'empty pool'
          : this.shape.huge
            ? `${target} of the window's ${window} values taken at random (a fresh pool for this level), all ` +
              `materialised; the window holds exactly ${Number(window) - target} free values, at least the ` +
              `claims measured, so they never leave it (checked); the pool beyond it is empty in the store`
            : `${target} values taken at random, all materialised`,
    };
  }

  /** Writes the allocation objects a claim would have written for each ordinal; returns how many. */
  private async write(table: Table, ordinals: readonly bigint[]): Promise<number> {
    const now = timestamp();
    const entries = ordinals.map((ordinal) => {
      const value = this.valueAt(ordinal);
      this.noteChange(value.value, true);
      const claim = standInClaim(`fill-${ordinal}`, this.id);
      return {
        key: allocationKey(this.id, this.info.allocationKind, value),
        record: newAllocation(claim, this.record, value, now),
        slot: value.slot,
        resource: this.info.allocationResource,
      };
    });
    // A few batch writers at once: the store is in this process, more do not go faster.
    const writers = 4;
    const share = Math.ceil(entries.length / writers / 25) * 25;
    await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        table.writeAllocations(entries.slice(i * share, (i + 1) * share)),
      ),
    );
    return entries.length;
  }

  /** A value taken (a claim's answer, a fill) or given back, as the stream would see its record. */
  noteChange(value: string, present: boolean): void {
    const parsed = valueKind(this.info.allocationKind).parse(value);
    if (!parsed.ok) return;
    const { slot, family } = parsed.value;
    this.changes.push({ record: randomUUID(), slot, family, present });
  }

  /**
   * The stream function's pool refresh (lib/service/counts/tally.ts) with the slot changes since the last one. A fill's
   * changes go in chunks of 1,024 (a stream batch carries at most 100 records; a fill in such batches
   * would take minutes); for a windowed "first N" fill, the counts are then those of the whole fill it
   * stands for.
   */
  async refresh(stream: ClaimContext): Promise<void> {
    const changes = this.changes;
    this.changes = [];
    for (let start = 0; start < changes.length || start === 0; start += 1024) {
      await refreshPool(stream, this.id, changes.slice(start, start + 1024));
    }
    if (this.virtualPrefix > 0n && changes.length > 100)
      await windowedCounts(stream, this, this.virtualPrefix);
  }

  /** Removes measured claims and their allocation objects (a release, recycled), between fill levels. */
  async deleteClaims(table: Table, claims: readonly { name: string; value?: string }[]): Promise<void> {
    const keys: ItemKey[] = [];
    for (const claim of claims) {
      keys.push(objectKey(NAMESPACE, 'claims', claim.name));
      if (claim.value !== undefined) {
        keys.push(this.keyOfValue(claim.value));
        this.noteChange(claim.value, false);
      }
    }
    await deleteItems(table, keys);
  }
}

/** The claim a fill value stands for: it never exists as an item, only its name and uid are written. */
function standInClaim(name: string, pool: PoolId): ClaimRecord {
  return {
    t: 'claim',
    metadata: {
      name,
      namespace: pool.namespace,
      uid: randomUUID(),
      generation: 1,
      creationTimestamp: timestamp(),
      labels: {},
      annotations: {},
    },
    spec: { poolRef: { kind: pool.kind, name: pool.name } },
    status: { conditions: [] },
    phase: 'Allocated',
    rv: 1,
  };
}

/**
 * The counts for a "first N" fill of which only [prefix, N) is materialised, written over the tally of
 * the window: every ordinal below N held (they are, in the fill this stands for), the hint at N.
 */
async function windowedCounts(stream: ClaimContext, pool: BenchPool, prefix: bigint): Promise<void> {
  const record = await stream.table.get<PoolRecord>(poolKeyOf(pool.id));
  if (record?.t !== 'pool' || !record.counts) return;
  const counts = record.counts;
  let searchFrom = prefix;
  while (pool.filled(searchFrom)) searchFrom++;
  // Every value below the hint is held, and none above it: a "first N" fill.
  const held = searchFrom;
  // PoolCounts.allocated is a JS number: past 2^53 (first-N fills of the /64) it is written as 2^53 − 2^20,
  // room for the claims measured. No store can hold that many allocation objects; the claim path reads
  // only searchFrom and the epoch.
  await stream.table.summaries.setPoolCounts(poolKeyOf(pool.id), record.metadata.uid, {
    ...counts,
    allocated: Math.min(Number(held), Number.MAX_SAFE_INTEGER - 2 ** 20),
    held: held.toString(),
    searchFrom: searchFrom.toString(),
    available: held < pool.space.total,
    revision: randomUUID(),
    epoch: randomUUID(),
  });
}

export async function deleteItems(table: Table, keys: readonly ItemKey[]): Promise<void> {
  for (let start = 0; start < keys.length; start += 25) {
    let requests: Record<string, { DeleteRequest: { Key: ItemKey } }[]> | undefined = {
      [table.tableName]: keys.slice(start, start + 25).map((key) => ({ DeleteRequest: { Key: key } })),
    };
    while (requests && Object.keys(requests).length > 0) {
      const result = await table.doc.send(new BatchWriteCommand({ RequestItems: requests }));
      requests = result.UnprocessedItems as typeof requests;
    }
  }
}

function range(from: bigint, to: bigint): bigint[] {
  const result: bigint[] = [];
  for (let ordinal = from; ordinal < to; ordinal++) result.push(ordinal);
  return result;
}

/** 0..n−1 in random order (Fisher–Yates). */
export function shuffled(n: number): number[] {
  const values = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  return values;
}
