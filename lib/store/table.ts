/**
 * The Table: every DynamoDB call on pools, claims, allocation objects and names (key formats: keys.ts;
 * item shapes: items.ts; group summaries and counts: summaries.ts). Nothing outside lib/store imports
 * the AWS SDK's DynamoDB clients, but for the local server's store and stream.
 */
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { AllocationKind, PoolKind, Resource } from '../domain/kinds.ts';
import type {
  AllocationRecord,
  ClaimRecord,
  ClaimStubRecord,
  ItemKey,
  PoolRecord,
} from '../domain/objects/records.ts';
import { timestamp } from '../domain/objects/objects.ts';
import { conditionFailed, itemKeyText, sentOnce, TableClient } from './client.ts';

export { itemKeyText };
import { allocationItem, type Item, type Stored } from './items.ts';
import {
  allocationKey,
  leaseAttributes,
  leaseShardKey,
  LIST_SHARDS,
  waitingKey,
  type PoolId,
} from './keys.ts';
import { ALLOCATIONS_INDEX, LEASES_INDEX, TTL_ATTRIBUTE, WAITING_INDEX } from './schema.ts';
import { leaseEpochSeconds } from '../domain/objects/leases.ts';
import { Quarantines } from './quarantines.ts';
import { NameHolds } from './holds.ts';
import { Summaries } from './summaries.ts';
import { Overlaps } from './overlaps.ts';
import { Carvings } from './carvings.ts';
import { Lists } from './lists.ts';
import { HistoryStore } from './history.ts';
import { Holdings } from './holdings.ts';
import { Quotas } from './quotas.ts';

export class Table extends TableClient {
  /** The stream function's group summaries, directory and pool counts. */
  readonly summaries = new Summaries(this);
  /** Name holds of pre-provisioned objects named like another value (service/allocation/name-holds.ts). */
  readonly holds = new NameHolds(this);
  /** Freed values held back (service/leases/quarantine.ts). */
  readonly quarantines = new Quarantines(this);
  /** Keys and overlap reads of IPPrefixPools with a range of lengths. */
  readonly overlaps = new Overlaps(this);
  /** Which pools are carved from which claims (prefixesFrom). */
  readonly carvings = new Carvings(this);
  /** Pages of a namespace's pools, claims and allocation objects, selected or not. */
  readonly lists = new Lists(this);
  /** The history watches read (service/history/changes.ts). */
  readonly history = new HistoryStore(this);
  /** The holders of shared pools, per namespace: their quotas (service/allocation/quota.ts). */
  readonly quotas = new Quotas(this);
  /** Who held each value, and when (service/history/holdings.ts). */
  readonly holdings = new Holdings(this);

  // ------------------------------------------------------------ generic reads

  async get<T>(key: ItemKey, consistent = true): Promise<Stored<T> | undefined> {
    const result = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: consistent }),
    );
    return result.Item as Stored<T> | undefined;
  }

  /**
   * Creates a pool or claim where no item or only a claim stub (offers for this name) is; returns the
   * stub it replaced. Throws ConditionFailedError when an object exists (with it, when the store sends
   * it back, as DynamoDB does), and for a claim UncertainWriteError when the outcome is unknown.
   */
  async createObject(key: ItemKey, record: PoolRecord | ClaimRecord): Promise<ClaimStubRecord | undefined> {
    try {
      const put = new PutCommand({
        TableName: this.tableName,
        Item: this.objectItem(key, record),
        ConditionExpression: 'attribute_not_exists(pk) OR t = :stub',
        ExpressionAttributeValues: { ':stub': 'stub' },
        ReturnValues: 'ALL_OLD',
        // What holds the name, when one does, comes back with the failure (ConditionFailedError.item).
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      // Sent again after a lost answer, a claim's put could land after a release and bring it back under
      // its uid, gone for good to the stream (service/stream/memory.ts): its caller uses a new uid.
      const result = await this.doc.send(record.t === 'claim' ? sentOnce(put) : put);
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
          Item: this.objectItem(key, record),
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

  /**
   * Marks a pool that a cascade is deleting (PoolRecord.deleting), if it is still the pool with `uid`: its
   * claims of other namespaces, which the cascade leaves, wait for it instead of taking its values again.
   */
  async markDeleting(key: ItemKey, uid: string): Promise<boolean> {
    return this.conditional(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'SET deleting = :now',
        ConditionExpression: '#m.#uid = :uid',
        ExpressionAttributeNames: { '#m': 'metadata', '#uid': 'uid' },
        ExpressionAttributeValues: { ':now': timestamp(), ':uid': uid },
      }),
    );
  }

  /** Clears a cascade's mark that is still `since` (the repair sweep, for a cascade never finished). */
  async clearDeleting(key: ItemKey, since: string): Promise<boolean> {
    return this.conditional(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'REMOVE deleting',
        ConditionExpression: 'deleting = :since',
        ExpressionAttributeValues: { ':since': since },
      }),
    );
  }

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
    return this.conditionalReturning<Stored<T>>(
      new DeleteCommand({
        TableName: this.tableName,
        Key: key,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
        ReturnValues: 'ALL_OLD',
      }),
    );
  }

  /**
   * A pool or claim as stored: its waiting index entry, and a lease's end as the TTL attribute (epoch
   * seconds), whatever TTL attribute the record was read with (a lease removed by a PUT loses it).
   */
  private objectItem(key: ItemKey, record: PoolRecord | ClaimRecord): Item {
    const { [TTL_ATTRIBUTE]: _ttl, lpk: _lpk, lsk: _lsk, ...rest } = record as unknown as Item;
    const lease = record.t === 'claim' ? record.leaseExpiresAt : undefined;
    return {
      ...key,
      ...rest,
      ...this.waitingAttributes(record),
      ...(lease !== undefined ? leaseAttributes(key, lease) : {}),
    };
  }

  /**
   * Keys of claims whose lease ended, and of quarantines whose time came, by `now` (RFC 3339 UTC), in one
   * shard of the leases index, oldest first: eventually consistent, a hint (the expiry's delete is
   * conditional on the item as read).
   */
  async endedLeases(shard: number, now: string, limit: number): Promise<ItemKey[]> {
    const result = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: LEASES_INDEX,
        KeyConditionExpression: 'lpk = :lpk AND lsk < :after',
        // '$' sorts after '#': every lease that ends at `now` or before.
        ExpressionAttributeValues: { ':lpk': leaseShardKey(shard), ':after': `${now}$` },
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
  }

  /**
   * Renews a lease: its end becomes `leaseExpiresAt`, while the claim is the one with `uid`, still at the
   * end read (`was`: no other renewal or change came between) and not yet ended at `now` (RFC 3339 UTC,
   * whole seconds, so the string comparison is the time's). Returns the claim as renewed; undefined when
   * the condition failed.
   */
  async renewLease(
    key: ItemKey,
    uid: string,
    was: string,
    leaseExpiresAt: string,
    now: string,
  ): Promise<Stored<ClaimRecord> | undefined> {
    return this.conditionalReturning<Stored<ClaimRecord>>(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'SET leaseExpiresAt = :end, #ttl = :ttl, lsk = :lsk, rv = rv + :one',
        ConditionExpression: '#m.#uid = :uid AND leaseExpiresAt = :was AND leaseExpiresAt > :now',
        ExpressionAttributeNames: { '#m': 'metadata', '#uid': 'uid', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':end': leaseExpiresAt,
          ':ttl': leaseEpochSeconds(leaseExpiresAt),
          ':lsk': leaseAttributes(key, leaseExpiresAt).lsk,
          ':one': 1,
          ':uid': uid,
          ':was': was,
          ':now': now,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
  }

  /**
   * Deletes a claim whose lease ended (at `now`), if it is still the claim with `uid` and that lease: an
   * expiry, as TTL's own delete would be, made by whichever reader finds it first. Returns what was
   * deleted; undefined when the claim changed or went meanwhile.
   */
  async deleteExpiredClaim(
    key: ItemKey,
    uid: string,
    leaseExpiresAt: string,
    now: string,
  ): Promise<Stored<ClaimRecord> | undefined> {
    return this.conditionalReturning<Stored<ClaimRecord>>(
      new DeleteCommand({
        TableName: this.tableName,
        Key: key,
        ConditionExpression: '#m.#uid = :uid AND leaseExpiresAt = :end AND leaseExpiresAt <= :now',
        ExpressionAttributeNames: { '#m': 'metadata', '#uid': 'uid' },
        ExpressionAttributeValues: { ':uid': uid, ':end': leaseExpiresAt, ':now': now },
        ReturnValues: 'ALL_OLD',
      }),
    );
  }

  private waitingAttributes(record: PoolRecord | ClaimRecord): Item {
    if (record.t !== 'claim' || record.phase !== 'Waiting') return {};
    const ref = record.spec.poolRef;
    return {
      // The pool's namespace, which a shared pool's claims need not be in: the pool's refresh wakes them.
      wpk: waitingKey({
        namespace: ref.namespace ?? record.metadata.namespace,
        kind: ref.kind as PoolKind,
        name: ref.name,
      }),
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
    outcome: Pick<ClaimRecord, 'status' | 'phase' | 'bound' | 'holder'>,
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
    if (outcome.holder !== undefined) {
      set.push('holder = :holder');
      values[':holder'] = outcome.holder;
    } else remove.push('holder');
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
        UpdateExpression:
          'SET phase = :waiting, #st = :status, rv = rv + :one REMOVE bound, allocatingUntil, holder',
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
    await this.conditional(
      new DeleteCommand({
        TableName: this.tableName,
        Key: key,
        ConditionExpression: 'target.pk = :pk AND target.sk = :sk',
        ExpressionAttributeValues: { ':pk': target.pk, ':sk': target.sk },
      }),
    );
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
}
