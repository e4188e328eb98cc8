/**
 * The table: key formats, item shapes and every DynamoDB call. Nothing else imports the AWS SDK.
 *
 * One table, keys `pk`/`sk`:
 * - pools and claims: `O#<ns>#<resource>#<shard>` / `<name>`. The shard (a hash of the name, 0..7)
 *   spreads one namespace's writes over eight partition keys; a list merges the eight.
 * - allocation objects: `A#<ns>#<poolKind>#<pool>#<family><block>` / `<slot>`: the pool and the value
 *   (in sortable hex) are the key, so `attribute_not_exists(pk)` on a put is the arbiter of every race.
 *   A block holds 64 consecutive slots: a claim reads one block to find a free value, and concurrent
 *   claims spread their writes over blocks.
 * - a group's summary (4096 slots), kept by the stream function: `A#<ns>#<poolKind>#<pool>#<family>G<group>`
 *   / `~`: a bitmap of held slots (`b`), its version, and the slot changes not yet confirmed in the pool's
 *   counts (`q_<id>`); and a pool's directory of summarised groups, `D#<ns>#<poolKind>#<pool>` /
 *   `<family><group>`, written once per group, so a recount finds every summary without a Scan
 *   (lib/tally.ts). A claim reads the summary to find free slots: one small item for 4096 slots.
 * - names of pre-provisioned allocation objects that are not the deterministic one:
 *   `N#<ns>#<resource>#<name>` / `N`, pointing at the allocation's key.
 * Indexes:
 * - `allocations` (gpk `<ns>#<resource>#<slot mod 8>`, gsk `<pool>#<slot>`, all attributes): lists,
 *   `?pool=`, cascade and recounts, without a Scan; eight shards again so no key takes every write.
 * - `waiting` (wpk `<ns>#<poolKind>#<pool>`, wsk `<created>#<name>`, keys only): claims that wait for a
 *   pool, present only while they wait (a sparse index).
 */
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type NativeAttributeValue,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { poolKindInfo, type AllocationKind, type PoolKind, type Resource } from './kinds.ts';
import type {
  AllocationRecord,
  ClaimRecord,
  ClaimStubRecord,
  ItemKey,
  PoolCounts,
  PoolRecord,
} from './records.ts';
import { timestamp } from './objects.ts';
import { slotWidth } from './spaces.ts';
import { ALLOCATIONS_INDEX, WAITING_INDEX } from './table-schema.ts';
import type { ParsedValue } from './values.ts';

export const LIST_SHARDS = 8;
/** log2 of the slots in one block partition. */
export const BLOCK_BITS = 6n;

type Item = Record<string, NativeAttributeValue>;
export type Stored<T> = T & ItemKey;

/** A conditional write lost: the item is not in the state the write expected. */
export class ConditionFailedError extends Error {
  override readonly name = 'ConditionFailedError';
}

// ---------------------------------------------------------------- keys

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

function allocationIndexKeys(
  namespace: string,
  resource: Resource,
  pool: string,
  slot: bigint,
  sk: string,
): { gpk: string; gsk: string } {
  return { gpk: `${namespace}#${resource}#${Number(slot % BigInt(LIST_SHARDS))}`, gsk: `${pool}#${sk}` };
}

/** An allocation object as stored: its record, its key, and its entry in the `allocations` index. */
function allocationItem(key: ItemKey, record: AllocationRecord, slot: bigint, resource: Resource): Item {
  const index = allocationIndexKeys(
    record.metadata.namespace,
    resource,
    record.spec.poolRef.name,
    slot,
    key.sk,
  );
  return { ...key, ...record, ...index };
}

/** log2 of the slots one group summary covers: 4096 slots, a 512-byte bitmap. */
export const GROUP_BITS = 12n;
const GROUP_BYTES = Number(1n << GROUP_BITS) / 8;

/** A group of a pool's slot space: the unit the stream function summarises (lib/tally.ts). */
export interface GroupRef {
  family: 4 | 6 | undefined;
  group: bigint;
}

/**
 * A slot change not yet confirmed in the pool's counts: offset in the group, +1 or −1, and 1 when the
 * allocation was made after a lost race.
 */
export type MarkerEntry = [offset: number, delta: 1 | -1, raced?: 0 | 1];

/** A group's summary as the stream function keeps it. */
export interface GroupSummary {
  /** Bit i: slot (group << GROUP_BITS) + i holds an allocation object. */
  bits: Uint8Array;
  /** Bumped by every write of the bits; absent until the first. */
  version: number | undefined;
  /** Slot changes recorded here whose records may not have reached the counts: marker id → entries. */
  pending: Map<string, MarkerEntry[]>;
  /** Whether the pool's directory lists this group. */
  listed: boolean;
}

const SUMMARY_SK = '~';
const MARKER_ATTRIBUTE = 'q_';

export function groupKey(pool: PoolId, ref: GroupRef): ItemKey {
  const tag = ref.family === undefined ? '' : `v${ref.family}.`;
  return {
    pk: `A#${pool.namespace}#${pool.kind}#${pool.name}#${tag}G${ref.group.toString(16)}`,
    sk: SUMMARY_SK,
  };
}

function directoryKey(pool: PoolId, ref?: GroupRef): ItemKey {
  const sk = ref
    ? `${ref.family === undefined ? '' : `v${ref.family}.`}${ref.group.toString(16).padStart(32, '0')}`
    : '';
  return { pk: `D#${pool.namespace}#${pool.kind}#${pool.name}`, sk };
}

function summaryOf(item: Item | undefined): GroupSummary {
  const bits = new Uint8Array(GROUP_BYTES);
  if (item?.b instanceof Uint8Array) bits.set(item.b.subarray(0, GROUP_BYTES));
  const summary: GroupSummary = {
    bits,
    version: typeof item?.v === 'number' ? item.v : undefined,
    pending: new Map(),
    listed: item?.l === 1,
  };
  for (const [name, value] of Object.entries(item ?? {})) {
    if (name.startsWith(MARKER_ATTRIBUTE)) {
      summary.pending.set(name.slice(MARKER_ATTRIBUTE.length), value as MarkerEntry[]);
    }
  }
  return summary;
}

/** The bitmap as stored: trailing zero bytes dropped (a pool's first group of a small pool stays small). */
function storedBits(bits: Uint8Array): Uint8Array {
  let end = bits.length;
  while (end > 1 && bits[end - 1] === 0) end--;
  return bits.slice(0, end);
}

export function nameKey(namespace: string, resource: Resource, name: string): ItemKey {
  return { pk: `N#${namespace}#${resource}#${name}`, sk: 'N' };
}

export function waitingKey(pool: PoolId): string {
  return `${pool.namespace}#${pool.kind}#${pool.name}`;
}

/** The `continue` token of a list: the last sort key returned, opaque to clients. */
export function encodeContinue(after: string): string {
  return Buffer.from(JSON.stringify({ after }), 'utf8').toString('base64url');
}

export function decodeContinue(token: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as { after?: unknown }).after === 'string'
    ) {
      return (parsed as { after: string }).after;
    }
  } catch {
    // falls through: a malformed token is the caller's 400
  }
  return undefined;
}

// ---------------------------------------------------------------- the table

export interface TableOptions {
  tableName: string;
  /** An SDK client to use (Powertools' `awsSdkV3Client` habit); a default one is built when absent. */
  client?: DynamoDBClient;
  clientConfig?: DynamoDBClientConfig;
}

export class Table {
  readonly doc: DynamoDBDocumentClient;
  readonly client: DynamoDBClient;
  readonly tableName: string;

  constructor(options: TableOptions) {
    this.client = options.client ?? new DynamoDBClient(options.clientConfig ?? {});
    this.doc = DynamoDBDocumentClient.from(this.client, {
      marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
    });
    this.tableName = options.tableName;
  }

  // ------------------------------------------------------------ generic reads

  async get<T>(key: ItemKey, consistent = true): Promise<Stored<T> | undefined> {
    const result = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: consistent }),
    );
    return result.Item as Stored<T> | undefined;
  }

  // ------------------------------------------------------------ group summaries (the stream function's)

  /** A group's summary, markers and all, read consistently (the stream function's read before it writes). */
  async readGroup(pool: PoolId, ref: GroupRef): Promise<GroupSummary> {
    const result = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: groupKey(pool, ref), ConsistentRead: true }),
    );
    return summaryOf(result.Item);
  }

  /**
   * A group's bitmap alone, for the claim path: an eventually consistent read that leaves the markers
   * (the stream function's bookkeeping) out of the answer. Billed the same; less to send and parse.
   */
  async readGroupBits(pool: PoolId, ref: GroupRef): Promise<Uint8Array> {
    const result = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: groupKey(pool, ref),
        ConsistentRead: false,
        ProjectionExpression: 'b',
      }),
    );
    return summaryOf(result.Item).bits;
  }

  /**
   * Writes a group's bits and the markers of the changes that made them, in one write, if the group is
   * still at `version` (several batches may write one group); false when another write came first.
   */
  async writeGroup(
    pool: PoolId,
    ref: GroupRef,
    bits: Uint8Array,
    version: number | undefined,
    markers: readonly { id: string; entries: MarkerEntry[] }[],
  ): Promise<boolean> {
    const names: Record<string, string> = {};
    const values: Item = { ':b': storedBits(bits), ':v': (version ?? 0) + 1 };
    const set = ['b = :b', 'v = :v'];
    markers.forEach(({ id, entries }, i) => {
      names[`#q${i}`] = MARKER_ATTRIBUTE + id;
      values[`:q${i}`] = entries;
      set.push(`#q${i} = :q${i}`);
    });
    if (version !== undefined) values[':was'] = version;
    return this.conditional(
      new UpdateCommand({
        TableName: this.tableName,
        Key: groupKey(pool, ref),
        UpdateExpression: `SET ${set.join(', ')}`,
        ConditionExpression: version === undefined ? 'attribute_not_exists(v)' : 'v = :was',
        ExpressionAttributeNames: markers.length ? names : undefined,
        ExpressionAttributeValues: values,
      }),
    );
  }

  /** Drops markers whose changes the pool's counts hold, and notes that the directory lists the group. */
  async finishGroup(pool: PoolId, ref: GroupRef, markerIds: readonly string[]): Promise<void> {
    const names: Record<string, string> = {};
    markerIds.forEach((id, i) => (names[`#q${i}`] = MARKER_ATTRIBUTE + id));
    const remove = markerIds.map((_, i) => `#q${i}`);
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: groupKey(pool, ref),
          UpdateExpression: `SET l = :listed${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: remove.length ? names : undefined,
          ExpressionAttributeValues: { ':listed': 1 },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** Lists a group in its pool's directory (idempotent). */
  async listGroup(pool: PoolId, ref: GroupRef): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...directoryKey(pool, ref), f: ref.family ?? 0, g: ref.group.toString(16) },
      }),
    );
  }

  /** Deletes a pool's group summaries and its directory (the pool is being deleted). */
  async deleteSummaries(pool: PoolId): Promise<void> {
    for await (const ref of this.listedGroups(pool)) {
      await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: groupKey(pool, ref) }));
      await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: directoryKey(pool, ref) }));
    }
  }

  /** Every group the pool's directory lists (a consistent read). */
  async *listedGroups(pool: PoolId): AsyncGenerator<GroupRef> {
    const query = {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': directoryKey(pool).pk },
      ConsistentRead: true,
    };
    for await (const item of this.pages(query)) {
      yield { family: item.f === 0 ? undefined : (item.f as 4 | 6), group: BigInt(`0x${String(item.g)}`) };
    }
  }

  /** Sends a conditional write: true when it landed, false when its condition did not hold. */
  private async conditional(command: PutCommand | UpdateCommand | DeleteCommand): Promise<boolean> {
    try {
      // One call for the three command types (send is overloaded per command).
      await this.doc.send(command as PutCommand);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Every item a Query matches, page after page. */
  private async *pages(input: QueryCommandInput): AsyncGenerator<Item> {
    let start: Item | undefined;
    do {
      const result = await this.doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      yield* result.Items ?? [];
      start = result.LastEvaluatedKey;
    } while (start);
  }

  /**
   * Writes a pool's counts if they are still at `revision` (absent: the pool has none yet) and the pool is
   * still the one with `uid`; false when another write came first.
   */
  async writeTally(
    key: ItemKey,
    uid: string,
    revision: string | undefined,
    counts: PoolCounts,
  ): Promise<boolean> {
    return this.conditional(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'SET #c = :counts',
        ConditionExpression:
          revision === undefined
            ? '#m.#uid = :uid AND attribute_not_exists(#c)'
            : '#m.#uid = :uid AND #c.#r = :revision',
        ExpressionAttributeNames: {
          '#c': 'counts',
          '#m': 'metadata',
          '#uid': 'uid',
          ...(revision === undefined ? {} : { '#r': 'revision' }),
        },
        ExpressionAttributeValues: {
          ':counts': counts,
          ':uid': uid,
          ...(revision === undefined ? {} : { ':revision': revision }),
        },
      }),
    );
  }

  // ------------------------------------------------------------ pools and claims

  /**
   * Creates a pool or claim. The condition: no item under the key, or only a claim stub (offers waiting
   * for this claim name). Returns the stub it replaced, if any; throws ConditionFailedError when an
   * object exists.
   */
  async createObject(key: ItemKey, record: PoolRecord | ClaimRecord): Promise<ClaimStubRecord | undefined> {
    try {
      const result = await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key, ...record, ...this.waitingAttributes(record) },
          ConditionExpression: 'attribute_not_exists(pk) OR t = :stub',
          ExpressionAttributeValues: { ':stub': 'stub' },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return result.Attributes as ClaimStubRecord | undefined;
    } catch (error) {
      throw conditionFailed(error);
    }
  }

  /** Replaces a pool or claim that is still at revision `rv` (optimistic concurrency). */
  async replaceObject(key: ItemKey, record: PoolRecord | ClaimRecord, rv: number): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key, ...record, ...this.waitingAttributes(record) },
          // A pool's counts belong to the stream function: the replace carries them over, so it must not
          // land on counts that changed since it read them.
          ConditionExpression:
            record.t !== 'pool'
              ? 'rv = :rv'
              : record.counts
                ? 'rv = :rv AND counts.revision = :counts'
                : 'rv = :rv AND attribute_not_exists(counts)',
          ExpressionAttributeValues: {
            ':rv': rv,
            ...(record.t === 'pool' && record.counts ? { ':counts': record.counts.revision } : {}),
          },
        }),
      );
    } catch (error) {
      throw conditionFailed(error);
    }
  }

  /** Deletes an object at revision `rv` (any revision when absent); returns what was deleted. */
  async deleteItem<T>(key: ItemKey, expect?: { rv?: number; uid?: string }): Promise<Stored<T> | undefined> {
    const conditions: string[] = ['attribute_exists(pk)'];
    const values: Item = {};
    const names: Record<string, string> = {};
    if (expect?.rv !== undefined) {
      conditions.push('rv = :rv');
      values[':rv'] = expect.rv;
    }
    if (expect?.uid !== undefined) {
      conditions.push('#m.#uid = :uid');
      names['#m'] = 'metadata';
      names['#uid'] = 'uid';
      values[':uid'] = expect.uid;
    }
    try {
      const result = await this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
          ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
          ReturnValues: 'ALL_OLD',
        }),
      );
      return result.Attributes as Stored<T> | undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  private waitingAttributes(record: PoolRecord | ClaimRecord): Item {
    if (record.t !== 'claim' || record.phase !== 'Waiting') return {};
    const ref = record.spec.poolRef;
    return {
      wpk: waitingKey({ namespace: record.metadata.namespace, kind: ref.kind as PoolKind, name: ref.name }),
      wsk: `${record.metadata.creationTimestamp}#${record.metadata.name}`,
    };
  }

  /**
   * Writes a claim's allocation outcome (status, phase, the key it holds, its place in the waiting index),
   * if the claim is still the one with `uid` and holds nothing else. Throws ConditionFailedError when the
   * claim is gone, recreated, or already bound to another allocation object.
   */
  async settleClaim(
    key: ItemKey,
    uid: string,
    outcome: Pick<ClaimRecord, 'status' | 'phase' | 'bound'>,
    claim: ClaimRecord,
  ): Promise<void> {
    const waiting = this.waitingAttributes({ ...claim, phase: outcome.phase });
    const set = ['#st = :status', 'phase = :phase', 'rv = rv + :one'];
    const remove: string[] = ['allocatingUntil'];
    const values: Item = {
      ':status': outcome.status,
      ':phase': outcome.phase,
      ':one': 1,
      ':uid': uid,
      ':pk': outcome.bound?.pk ?? '-',
      ':sk': outcome.bound?.sk ?? '-',
    };
    if (outcome.bound) {
      set.push('bound = :bound');
      values[':bound'] = outcome.bound;
    } else remove.push('bound');
    if (waiting.wpk !== undefined) {
      set.push('wpk = :wpk', 'wsk = :wsk');
      values[':wpk'] = waiting.wpk;
      values[':wsk'] = waiting.wsk;
    } else remove.push('wpk', 'wsk');
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
          // The same claim, holding nothing or this very key. Written without parentheses (AND binds
          // tighter than OR, in DynamoDB as in dynalite): dynalite's parser backtracks on nested ones,
          // which made this settle, once per claim, cost it two and a half times a put.
          ConditionExpression:
            '#m.#uid = :uid AND attribute_not_exists(bound) OR #m.#uid = :uid AND bound.pk = :pk AND bound.sk = :sk',
          ExpressionAttributeNames: { '#m': 'metadata', '#uid': 'uid', '#st': 'status' },
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      throw conditionFailed(error);
    }
  }

  /**
   * Makes a claim that held `from` hold nothing (its allocation object was deleted), so it allocates again.
   * False when the claim changed meanwhile.
   */
  async unbindClaim(key: ItemKey, uid: string, from: ItemKey): Promise<boolean> {
    return this.conditional(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'SET phase = :waiting, #st = :status, rv = rv + :one REMOVE bound, allocatingUntil',
        ConditionExpression: '#m.#uid = :uid AND bound.pk = :pk AND bound.sk = :sk',
        ExpressionAttributeNames: { '#m': 'metadata', '#uid': 'uid', '#st': 'status' },
        ExpressionAttributeValues: {
          ':waiting': 'Waiting',
          ':status': {
            conditions: [
              {
                type: 'Allocated',
                status: 'Unknown',
                reason: 'Allocating',
                message: 'its allocation object was deleted; a value is being allocated',
                lastTransitionTime: timestamp(),
              },
            ],
          },
          ':one': 1,
          ':uid': uid,
          ':pk': from.pk,
          ':sk': from.sk,
        },
      }),
    );
  }

  /** Offers an allocation object to a claim name: adds it to the claim's stub, or to the claim itself. */
  async offerToClaim(claimKey: ItemKey, allocation: ItemKey): Promise<void> {
    // Two writes, as the map must exist before a key is set in it. A claim written over the stub between
    // them has no map yet (the second write would be refused as invalid): make the map again.
    for (let attempt = 1; ; attempt++) {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: claimKey,
          UpdateExpression: 'SET t = if_not_exists(t, :stub), offers = if_not_exists(offers, :empty)',
          ExpressionAttributeValues: { ':stub': 'stub', ':empty': {} },
        }),
      );
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: claimKey,
            UpdateExpression: 'SET offers.#k = :allocation',
            ConditionExpression: 'attribute_exists(offers)',
            ExpressionAttributeNames: { '#k': `${allocation.pk}|${allocation.sk}` },
            ExpressionAttributeValues: { ':allocation': allocation },
          }),
        );
        return;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) || attempt >= 5) throw error;
      }
    }
  }

  /** Writes a pool's counts (from the stream function), if the pool is still the one with `uid`. */
  async setPoolCounts(key: ItemKey, uid: string, counts: PoolCounts): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET #c = :counts',
          ConditionExpression: '#m.#uid = :uid',
          ExpressionAttributeNames: { '#c': 'counts', '#m': 'metadata', '#uid': 'uid' },
          ExpressionAttributeValues: { ':counts': counts, ':uid': uid },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return; // the pool went: nothing to count
      throw error;
    }
  }

  /**
   * One page of pools or claims in a namespace, in name order, merged from the shards. Stubs are skipped.
   */
  async listObjects<T>(
    namespace: string,
    resource: Resource,
    limit: number,
    after: string | undefined,
  ): Promise<{ items: Stored<T>[]; last?: string }> {
    const type = resource === 'claims' ? 'claim' : 'pool';
    const pages = await Promise.all(
      Array.from({ length: LIST_SHARDS }, (_, shard) =>
        this.queryPage<T>(
          {
            TableName: this.tableName,
            KeyConditionExpression: after === undefined ? 'pk = :pk' : 'pk = :pk AND sk > :after',
            FilterExpression: 't = :t',
            ExpressionAttributeValues: {
              ':pk': `O#${namespace}#${resource}#${shard}`,
              ':t': type,
              ...(after === undefined ? {} : { ':after': after }),
            },
          },
          limit,
        ),
      ),
    );
    return mergePages(pages, limit, (item) => item.sk);
  }

  // ------------------------------------------------------------ allocation objects

  /**
   * The slots held in a pool between `first` and `last`, which lie in one block: a single Query.
   * Eventually consistent on purpose: it is a hint, and the conditional put decides.
   */
  async heldSlots(
    pool: PoolId,
    allocationKind: AllocationKind,
    family: 4 | 6 | undefined,
    first: bigint,
    last: bigint,
    limit?: number,
  ): Promise<bigint[]> {
    const from = allocationKey(pool, allocationKind, { slot: first, family });
    const to = allocationKey(pool, allocationKind, { slot: last, family });
    const slots: bigint[] = [];
    let start: Item | undefined;
    do {
      const result = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': from.pk, ':from': from.sk, ':to': to.sk },
          ProjectionExpression: 'sk',
          ExclusiveStartKey: start,
          Limit: limit,
        }),
      );
      for (const item of result.Items ?? []) slots.push(BigInt(`0x${item.sk as string}`));
      start = result.LastEvaluatedKey;
    } while (start && limit === undefined);
    return slots;
  }

  /**
   * Puts a new allocation object. `attribute_not_exists(pk)` makes the store's unique key the only
   * arbiter: of two claims racing for a value, exactly one put succeeds. Returns false when the value is
   * held.
   */
  async putAllocation(
    key: ItemKey,
    record: AllocationRecord,
    slot: bigint,
    resource: Resource,
  ): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: allocationItem(key, record, slot, resource),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /**
   * Writes allocation objects unconditionally, 25 to a request: only for filling a pool in the benchmark,
   * never on a request path (there the conditional put is the arbiter).
   */
  async writeAllocations(
    entries: readonly { key: ItemKey; record: AllocationRecord; slot: bigint; resource: Resource }[],
  ): Promise<void> {
    for (let start = 0; start < entries.length; start += 25) {
      let requests: Record<string, { PutRequest: { Item: Item } }[]> | undefined = {
        [this.tableName]: entries.slice(start, start + 25).map(({ key, record, slot, resource }) => ({
          PutRequest: { Item: allocationItem(key, record, slot, resource) },
        })),
      };
      while (requests && Object.keys(requests).length > 0) {
        const result = await this.doc.send(new BatchWriteCommand({ RequestItems: requests }));
        requests = result.UnprocessedItems as typeof requests;
      }
    }
  }

  /** Replaces an allocation object at revision `rv`. */
  async replaceAllocation(
    key: ItemKey,
    record: AllocationRecord,
    slot: bigint,
    resource: Resource,
    rv: number,
  ) {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: allocationItem(key, record, slot, resource),
          ConditionExpression: 'rv = :rv',
          ExpressionAttributeValues: { ':rv': rv },
        }),
      );
    } catch (error) {
      throw conditionFailed(error);
    }
  }

  /**
   * Moves an allocation object's claimRef from `fromUid` (the uid it names now, "" when cleared) to
   * `toUid`, keeping the name: binds (a claim's uid), or releases under Retain ("").
   */
  async setAllocationUid(key: ItemKey, claimName: string, fromUid: string, toUid: string): Promise<boolean> {
    return this.conditional(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'SET #s.#c.#uid = :to, rv = rv + :one',
        ConditionExpression: '#s.#c.#name = :name AND #s.#c.#uid = :from',
        ExpressionAttributeNames: { '#s': 'spec', '#c': 'claimRef', '#uid': 'uid', '#name': 'name' },
        ExpressionAttributeValues: { ':name': claimName, ':from': fromUid, ':to': toUid, ':one': 1 },
      }),
    );
  }

  /** Deletes an allocation object if it is still bound to claim uid `uid`. */
  async deleteBoundAllocation(key: ItemKey, claimName: string, uid: string): Promise<boolean> {
    return this.conditional(
      new DeleteCommand({
        TableName: this.tableName,
        Key: key,
        ConditionExpression: '#s.#c.#name = :name AND #s.#c.#uid = :uid',
        ExpressionAttributeNames: { '#s': 'spec', '#c': 'claimRef', '#uid': 'uid', '#name': 'name' },
        ExpressionAttributeValues: { ':name': claimName, ':uid': uid },
      }),
    );
  }

  /** Records a custom allocation name; false when the name is taken by another allocation. */
  async putName(key: ItemKey, target: ItemKey): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...key, t: 'name', target },
        ConditionExpression: 'attribute_not_exists(pk) OR (target.pk = :pk AND target.sk = :sk)',
        ExpressionAttributeValues: { ':pk': target.pk, ':sk': target.sk },
      }),
    );
  }

  async deleteName(key: ItemKey, target: ItemKey): Promise<void> {
    try {
      await this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: 'target.pk = :pk AND target.sk = :sk',
          ExpressionAttributeValues: { ':pk': target.pk, ':sk': target.sk },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** One page of allocation objects of a namespace (optionally one pool), ordered by pool then value. */
  async listAllocations(
    namespace: string,
    resource: Resource,
    pool: string | undefined,
    limit: number,
    after: string | undefined,
  ): Promise<{ items: Stored<AllocationRecord>[]; last?: string }> {
    const low = maxString(
      after === undefined ? undefined : `${after} `,
      pool === undefined ? undefined : `${pool}#`,
    );
    const high = pool === undefined ? undefined : `${pool}#~`;
    const pages = await Promise.all(
      Array.from({ length: LIST_SHARDS }, (_, shard) => {
        const values: Item = { ':gpk': `${namespace}#${resource}#${shard}` };
        let condition = 'gpk = :gpk';
        if (low !== undefined && high !== undefined) {
          condition += ' AND gsk BETWEEN :low AND :high';
          values[':low'] = low;
          values[':high'] = high;
        } else if (low !== undefined) {
          condition += ' AND gsk >= :low';
          values[':low'] = low;
        }
        return this.queryPage<AllocationRecord & { gsk: string }>(
          {
            TableName: this.tableName,
            IndexName: ALLOCATIONS_INDEX,
            KeyConditionExpression: condition,
            ExpressionAttributeValues: values,
          },
          limit,
        );
      }),
    );
    return mergePages(pages, limit, (item) => item.gsk);
  }

  /** Every allocation object of one pool, page by page (the stream's recount and a cascade). */
  async *poolAllocations(
    namespace: string,
    resource: Resource,
    pool: string,
  ): AsyncGenerator<Stored<AllocationRecord>> {
    for (let shard = 0; shard < LIST_SHARDS; shard++) {
      const query = {
        TableName: this.tableName,
        IndexName: ALLOCATIONS_INDEX,
        KeyConditionExpression: 'gpk = :gpk AND begins_with(gsk, :pool)',
        ExpressionAttributeValues: { ':gpk': `${namespace}#${resource}#${shard}`, ':pool': `${pool}#` },
      };
      for await (const item of this.pages(query)) yield item as Stored<AllocationRecord>;
    }
  }

  /** Whether any allocation object references the pool (one small Query per shard, stopping early). */
  async poolHasAllocations(namespace: string, resource: Resource, pool: string): Promise<boolean> {
    for await (const allocation of this.poolAllocations(namespace, resource, pool)) {
      void allocation;
      return true;
    }
    return false;
  }

  /** Claims waiting for a pool, oldest first. */
  async waitingClaims(pool: PoolId, limit: number): Promise<ItemKey[]> {
    const result = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: WAITING_INDEX,
        KeyConditionExpression: 'wpk = :wpk',
        ExpressionAttributeValues: { ':wpk': waitingKey(pool) },
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
  }

  private async queryPage<T>(
    input: QueryCommandInput,
    limit: number,
  ): Promise<{ items: Stored<T>[]; more: boolean }> {
    const items: Stored<T>[] = [];
    let start: Item | undefined;
    do {
      const result = await this.doc.send(
        new QueryCommand({ ...input, Limit: limit + 1 - items.length, ExclusiveStartKey: start }),
      );
      items.push(...((result.Items ?? []) as Stored<T>[]));
      start = result.LastEvaluatedKey;
    } while (start && items.length <= limit);
    return { items, more: items.length > limit || start !== undefined };
  }
}

function maxString(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

/** Merges sorted shard pages into one page of `limit`; `last` is set when more items follow. */
function mergePages<T>(
  pages: { items: T[]; more: boolean }[],
  limit: number,
  sortKey: (item: T) => string,
): { items: T[]; last?: string } {
  const all = pages.flatMap((page) => page.items).sort((a, b) => compareText(sortKey(a), sortKey(b)));
  const items = all.slice(0, limit);
  const more = all.length > limit || pages.some((page) => page.more);
  const lastItem = items[items.length - 1];
  return more && lastItem !== undefined ? { items, last: sortKey(lastItem) } : { items };
}

/** DynamoDB orders string keys by UTF-8 bytes; for our ASCII keys that is code-unit order. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function conditionFailed(error: unknown): unknown {
  return error instanceof ConditionalCheckFailedException ? new ConditionFailedError(error.message) : error;
}
