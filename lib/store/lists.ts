/**
 * Lists of one namespace's pools, claims and allocation objects: eight shards queried at once and merged
 * in key order (keys.ts), page by page with a `last` key the caller turns into a continue token.
 *
 * A list with a filter (a selector, lib/domain/lists/selection.ts) reads a bounded page: one Query per shard of
 * at most `limit + 1` items evaluated, whatever the filter keeps. The page answers the kept items up to
 * the lowest key every unfinished shard has read past, and `last` is that key, so the next page starts
 * where nothing is unread; a filter that keeps few gives short (even empty) pages with a continue token,
 * as a Kubernetes API server may answer, never a read of the whole namespace in one request.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Resource } from '../domain/kinds.ts';
import type { AllocationRecord } from '../domain/objects/records.ts';
import type { TableClient } from './client.ts';
import type { Item, Stored } from './items.ts';
import { LIST_SHARDS } from './keys.ts';
import { ALLOCATIONS_INDEX } from './schema.ts';

export interface ListPage<T> {
  items: T[];
  /** Where the next page starts (exclusive); absent after the last page. */
  last?: string;
}

/** What the page's Queries read, for the benchmark's account of a selected list. */
export interface ShardPage<T> {
  items: T[];
  /** More items after the last evaluated one. */
  more: boolean;
  /** The sort key of the last item the Query evaluated, kept or not. */
  evaluated?: string;
}

export class Lists {
  constructor(private readonly io: TableClient) {}

  /** One page of pools or claims in a namespace, in name order. Stubs are skipped. */
  async objects<T>(
    namespace: string,
    resource: Resource,
    limit: number,
    after: string | undefined,
    keep?: (item: Stored<T>) => boolean,
  ): Promise<ListPage<Stored<T>>> {
    const type = resource === 'claims' ? 'claim' : 'pool';
    const pages = await Promise.all(
      Array.from({ length: LIST_SHARDS }, (_, shard) =>
        this.shardPage<Stored<T>>(
          {
            TableName: this.io.tableName,
            KeyConditionExpression: after === undefined ? 'pk = :pk' : 'pk = :pk AND sk > :after',
            FilterExpression: 't = :t',
            // Strongly consistent: a list shows every write made before it, so a watch from its
            // resourceVersion misses none after it (service/history/changes.ts, 4.).
            ConsistentRead: true,
            ExpressionAttributeValues: {
              ':pk': `O#${namespace}#${resource}#${shard}`,
              ':t': type,
              ...(after === undefined ? {} : { ':after': after }),
            },
          },
          limit,
          'sk',
          keep,
        ),
      ),
    );
    return mergePages(pages, limit, (item) => item.sk, keep !== undefined);
  }

  /** One page of allocation objects of a namespace (optionally one pool), ordered by pool then value. */
  async allocations(
    namespace: string,
    resource: Resource,
    pool: string | undefined,
    limit: number,
    after: string | undefined,
    keep?: (item: Stored<AllocationRecord>) => boolean,
  ): Promise<ListPage<Stored<AllocationRecord>>> {
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
        return this.shardPage<Stored<AllocationRecord> & { gsk: string }>(
          {
            TableName: this.io.tableName,
            IndexName: ALLOCATIONS_INDEX,
            KeyConditionExpression: condition,
            ExpressionAttributeValues: values,
          },
          limit,
          'gsk',
          keep,
        );
      }),
    );
    return mergePages(pages, limit, (item) => item.gsk, keep !== undefined);
  }

  /**
   * One shard's part of a page: without a filter, items until `limit + 1` are kept (the store's own
   * filter, stubs out, may need several requests); with one, a single request of `limit + 1` items.
   */
  private async shardPage<T>(
    input: QueryCommandInput,
    limit: number,
    sortKey: 'sk' | 'gsk',
    keep?: (item: T) => boolean,
  ): Promise<ShardPage<T>> {
    const items: T[] = [];
    let start: Item | undefined;
    let evaluated: string | undefined;
    do {
      const result = await this.io.doc.send(
        new QueryCommand({
          ...input,
          Limit: keep ? limit + 1 : limit + 1 - items.length,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of (result.Items ?? []) as T[]) if (!keep || keep(item)) items.push(item);
      start = result.LastEvaluatedKey;
      if (start) evaluated = start[sortKey] as string;
    } while (start && !keep && items.length <= limit);
    return { items, more: items.length > limit || start !== undefined, evaluated };
  }
}

function maxString(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

/**
 * Merges sorted shard pages into one page of at most `limit`. `bounded`: the shards read a bounded page
 * each, so only items up to the lowest key every unfinished shard evaluated are certain to be all there.
 */
function mergePages<T>(
  pages: ShardPage<T>[],
  limit: number,
  sortKey: (item: T) => string,
  bounded: boolean,
): ListPage<T> {
  let bound: string | undefined;
  if (bounded)
    for (const page of pages)
      if (page.more && page.evaluated !== undefined && (bound === undefined || page.evaluated < bound))
        bound = page.evaluated;
  const all = pages
    .flatMap((page) => page.items)
    .filter((item) => bound === undefined || sortKey(item) <= bound)
    .sort((a, b) => compareText(sortKey(a), sortKey(b)));
  const items = all.slice(0, limit);
  const lastItem = items[items.length - 1];
  if (all.length > limit) return { items, last: sortKey(lastItem!) };
  if (bounded) return bound === undefined ? { items } : { items, last: bound };
  const more = pages.some((page) => page.more);
  return more && lastItem !== undefined ? { items, last: sortKey(lastItem) } : { items };
}

/** DynamoDB orders string keys by UTF-8 bytes; for our ASCII keys that is code-unit order. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
