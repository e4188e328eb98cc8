/**
 * What a stream batch reads, read once: every record kind names the items its work needs before any
 * work starts (lib/service/stream/kinds.ts), and the batch reads them all in one round trip (BatchGetItem,
 * store/table.ts getMany: the strongly consistent keys in one request, the others in another).
 *
 * Two kinds of read, and what each may decide:
 * - consistent: the item as it is now (after every write acknowledged before the read). What a change of
 *   state is decided on, and what a slot's bit follows.
 * - eventual: the item as it was a moment ago. Enough to find that there is nothing to do (the claim holds
 *   the object whose record this is), since whatever happened since has a record of its own that will be
 *   worked on; before any write on its strength, `fresh` reads the item again, consistently.
 */
import type { ItemKey } from '../../domain/records.ts';
import type { Stored } from '../../store/items.ts';
import { itemKeyText, type Table } from '../../store/table.ts';

export interface Read<T> {
  item: Stored<T> | undefined;
  consistent: boolean;
}

export class BatchReads {
  private readonly wanted = new Map<string, { key: ItemKey; consistent: boolean }>();
  private readonly read = new Map<string, Read<unknown>>();

  constructor(private readonly table: Table) {}

  /** Asks for an item in the batch's read (consistent wins when both are asked). */
  want(key: ItemKey, consistent: boolean): void {
    const text = itemKeyText(key);
    const before = this.wanted.get(text);
    if (this.read.has(text) || (before && (before.consistent || !consistent))) return;
    this.wanted.set(text, { key, consistent });
  }

  /** Reads everything asked for since the last fetch: one round trip. */
  async fetch(): Promise<void> {
    const asked = [...this.wanted.values()];
    this.wanted.clear();
    const byConsistency = [true, false].map((consistent) =>
      asked.filter((want) => want.consistent === consistent).map((want) => want.key),
    );
    await Promise.all(
      byConsistency.map(async (keys, i) => {
        if (keys.length === 0) return;
        const consistent = i === 0;
        const found = await this.table.getMany(keys, consistent);
        for (const key of keys) {
          const text = itemKeyText(key);
          this.read.set(text, { item: found.get(text) as Stored<unknown> | undefined, consistent });
        }
      }),
    );
  }

  /** The item as the batch read it; undefined when nobody asked for it. */
  get<T>(key: ItemKey): Read<T> | undefined {
    return this.read.get(itemKeyText(key)) as Read<T> | undefined;
  }

  /** The item as the batch read it consistently, or as it is now (read now when it was not, or not so). */
  async current<T>(key: ItemKey): Promise<Stored<T> | undefined> {
    const read = this.get<T>(key);
    if (read?.consistent) return read.item;
    return this.fresh<T>(key);
  }

  /** The item as it is now: a consistent read, which the batch then keeps. */
  async fresh<T>(key: ItemKey): Promise<Stored<T> | undefined> {
    const item = await this.table.get<T>(key);
    this.read.set(itemKeyText(key), { item, consistent: true });
    return item;
  }

  /** Forgets an item (this batch wrote it): the next `current` reads it again. */
  forget(key: ItemKey): void {
    this.read.delete(itemKeyText(key));
  }
}
