/**
 * What a stream batch reads, read once: every record kind names the items its work needs before any
 * work starts (lib/service/stream/kinds.ts), and the batch reads them all in one round trip (BatchGetItem,
 * store/client.ts getByKey: the strongly consistent keys in one request, the others in another).
 *
 * Two kinds of read, and what each may decide:
 * - consistent: the item as it is now (after every write acknowledged before the read). What a change of
 *   state is decided on, and what a slot's bit follows.
 * - eventual: the item as it was a moment ago. Enough to find that there is nothing to do (the claim holds
 *   the object whose record this is), since whatever happened since has a record of its own that will be
 *   worked on; before any write on its strength, `fresh` reads the item again, consistently.
 *
 * A read of an item the batch's own work has written since (store/client.ts trackWrites counts them) is
 * no read of it any more: `get` leaves it out and `current` reads again. (A later life of an item, or
 * another item's work, must not decide on what the batch itself has changed.)
 */
import type { ItemKey } from '../../domain/objects/records.ts';
import type { Stored } from '../../store/items.ts';
import { itemKeyText, type Table } from '../../store/table.ts';

export interface Read<T> {
  item: Stored<T> | undefined;
  consistent: boolean;
}

type Kept = Read<unknown> & { writes: number };

export class BatchReads {
  private readonly wanted = new Map<string, { key: ItemKey; consistent: boolean }>();
  private readonly read = new Map<string, Kept>();

  /** `writes`: the batch's writes by key (store/client.ts trackWrites fills it as they are sent). */
  constructor(
    private readonly table: Table,
    private readonly writes: ReadonlyMap<string, number> = new Map(),
  ) {}

  private writesOf(text: string): number {
    return this.writes.get(text) ?? 0;
  }

  /** Asks for an item in the batch's read (consistent wins when both are asked). */
  want(key: ItemKey, consistent: boolean): void {
    const text = itemKeyText(key);
    const before = this.wanted.get(text);
    if (this.get(key)?.consistent || (this.get(key) && !consistent)) return;
    if (before && (before.consistent || !consistent)) return;
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
        const before = new Map(keys.map((key) => [itemKeyText(key), this.writesOf(itemKeyText(key))]));
        const found = await this.table.getByKey(keys, consistent);
        for (const key of keys) {
          const text = itemKeyText(key);
          const item = found.get(text) as Stored<unknown> | undefined;
          this.read.set(text, { item, consistent, writes: before.get(text)! });
        }
      }),
    );
  }

  /** The item as the batch read it; undefined when nobody asked for it, or the batch wrote it since. */
  get<T>(key: ItemKey): Read<T> | undefined {
    const text = itemKeyText(key);
    const kept = this.read.get(text);
    return kept && kept.writes === this.writesOf(text) ? (kept as Read<T>) : undefined;
  }

  /** The item as the batch read it consistently, or as it is now (read now when it was not, or not so). */
  async current<T>(key: ItemKey): Promise<Stored<T> | undefined> {
    const read = this.get<T>(key);
    if (read?.consistent) return read.item;
    return this.fresh<T>(key);
  }

  /** The item as it is now: a consistent read, which the batch then keeps. */
  async fresh<T>(key: ItemKey): Promise<Stored<T> | undefined> {
    const text = itemKeyText(key);
    const writes = this.writesOf(text);
    const item = await this.table.get<T>(key);
    this.read.set(text, { item, consistent: true, writes });
    return item;
  }

  /** Reads again, in one round trip, those of `keys` the batch has written since it read them. */
  async refresh(keys: readonly ItemKey[]): Promise<void> {
    for (const key of keys) if (!this.get(key)) this.want(key, true);
    await this.fetch();
  }
}
