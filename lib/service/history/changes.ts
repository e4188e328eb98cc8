/**
 * The history a watch reads (api.md, "Routes", watch), kept by the history function: a second reader
 * of the table's stream (functions/history.ts), apart from the stream function. Per namespace and
 * resource (a collection), entries numbered 1, 2, 3, … each hold the watch events of one batch's records
 * of that collection (lib/domain/lists/watch.ts); a resourceVersion is a position in that sequence, the
 * entry's number × 1000 + the event's place in it (1 … 999), and a list's is the position after an entry.
 *
 * Why a watcher misses nothing and sees each change once, in order per object:
 *
 * 1. No gap, one order. Entry n + 1 is put conditionally on its number being free, and only by an
 *    appender that saw entry n exist (it read the head, or the highest entry, or put n itself). So when
 *    n + 1 exists, n was written before it, and a strongly consistent read of the entries after R sees
 *    a gapless run: an entry that becomes visible later has a higher number than any seen. Two
 *    appenders at once (batches of different stream shards) race for the same number; the put decides,
 *    the loser reads the head again and takes the next.
 * 2. In order per object. All of an item's changes are records of one stream shard, in the order they
 *    were written; a shard's batches reach this function one at a time, in order (parallelization 1),
 *    and a batch's events go in record order into its entries, which are appended in that order.
 * 3. Once. A batch that fails is delivered again from its first record (this function reports no
 *    partial failures and the mapping does not bisect), perhaps longer or shorter than before, and a
 *    mapping may deliver a batch twice. Before its first append, a batch puts a marker keyed by its
 *    first record, with the head of each collection it is about to append to; a delivery that finds the
 *    marker reads the entries that deliveries of this batch appended since those heads, and leaves out
 *    the records they hold. A delivery shorter than an earlier one ends among records that one appended:
 *    the next batch starts there under another first record, so those records go into their
 *    collection's head as records to skip (for a day, longer than the stream keeps a record), which
 *    every appender reads before it appends. An entry holds a record's events whole: a record is
 *    appended entirely or not at all. A put whose answer was lost and that the SDK retried finds its own
 *    entry (same batch, same first record) and counts as done.
 * 4. A list at R shows every change at or below R, and a watch from R answers every change above it.
 *    A list reads the head before its pages, and pages of pools and claims are strongly consistent
 *    reads: a change it does not show was written after the page was read, so after the head was read,
 *    and its entry (appended after its write) is numbered above R. A change at or below R was appended
 *    before the head was read, so written before the pages were read, and shown. Allocation objects are
 *    listed from an index, which DynamoDB updates a moment after the write (eventually consistent):
 *    their lists' R is the last entry appended `INDEX_SETTLE_MS` before the list, so a change the index
 *    does not show yet is above R. What this leaves: a change written before a list but appended after
 *    its head was read (the history's delay behind the table; for allocation objects, INDEX_SETTLE_MS)
 *    is both shown by the list and above R. The watch answers it again, with that object's other changes
 *    of that window, in order, ending with the state the list showed: never a change missed, but the
 *    changes of that window perhaps twice. So a list of one page does better: it stands at the position
 *    where the history holds every state it shows, and shows the history's state there
 *    (service/history/snapshot.ts); the head read before the page is what a longer list names.
 * 5. Kept for `HISTORY_RETENTION_MS`. Entries carry a TTL, and a reader treats an entry older than the
 *    retention as gone whether or not DynamoDB has deleted it yet (TTL deletes within days, not on time;
 *    the local server prunes them itself). A watch from a position whose next entry is gone answers 410
 *    Expired, and the client lists again. The head item outlives the entries, so numbering never starts
 *    over.
 */
import { isAllocationResource, type Resource } from '../../domain/kinds.ts';
import { changesOf, visibleOf, type HistoryEvent } from '../../domain/lists/watch.ts';
import { indexedState } from '../../domain/lists/snapshot.ts';
import type { HistoryEntry } from '../../store/history.ts';
import type { Table } from '../../store/table.ts';
import { eachAtMost } from '../concurrency.ts';

/** How long a namespace's history is kept: a watch from an older position answers 410. */
export const HISTORY_RETENTION_MS = 15 * 60_000;
/** How long the allocations index may take to show a write, as a list of allocation objects assumes. */
export const INDEX_SETTLE_MS = 5_000;
/** Events per entry, so a position (entry × 1000 + index) stays an integer that says which. */
export const EVENTS_PER_ENTRY = 999;
/** An entry's events, as JSON, stay under DynamoDB's 400 KB item limit. */
const ENTRY_BYTES = 300_000;
/** How long a batch marker is kept: past the stream's 24-hour retention, so no delivery outlives it. */
const BATCH_MARKER_SECONDS = 25 * 3600;

/** A stream record as the history reads it. */
export interface HistoryRecord {
  /** The record's eventID: the same in every delivery. */
  id: string;
  oldImage?: Record<string, unknown>;
  newImage?: Record<string, unknown>;
}

export interface HistoryOptions {
  now?: () => number;
  /** Delete entries past the retention (the local server, where no TTL runs). */
  prune?: boolean;
}

/** A position in a collection's history: after event `index` of entry `seq` (999: after the entry). */
export interface Position {
  seq: number;
  index: number;
}

export const positionOf = (version: number): Position => ({
  seq: Math.floor(version / 1000),
  index: version % 1000,
});
export const versionOf = (position: Position): number => position.seq * 1000 + position.index;
export const afterEntry = (seq: number): number => versionOf({ seq, index: EVENTS_PER_ENTRY });

interface Group {
  namespace: string;
  resource: Resource;
  /** Per record, in order, its events in this collection. */
  records: { id: string; events: HistoryEvent[] }[];
}

const groupKey = (namespace: string, resource: Resource) => `${namespace}/${resource}`;

const lastPrune = new WeakMap<Table, Map<string, number>>();

const collectionOf = (key: string) => {
  const at = key.lastIndexOf('/');
  return { namespace: key.slice(0, at), resource: key.slice(at + 1) as Resource };
};

/**
 * A head's `skip` set holds `<hour>:<record>`: records an earlier delivery appended that lie past the end
 * of a later, shorter delivery of the same batch (3. above), kept for a day and an hour, longer than the
 * stream keeps any record.
 */
const SKIP_HOURS = 25;
const skipHour = (element: string) => Number(element.slice(0, element.indexOf(':')));
const skipRecord = (element: string) => element.slice(element.indexOf(':') + 1);

/** The highest entry number of a collection: the head item's, or above it an entry an appender left. */
export async function currentHead(table: Table, namespace: string, resource: Resource): Promise<number> {
  const head = await table.history.head(namespace, resource);
  return (await table.history.highestAfter(namespace, resource, head)) ?? head;
}

/** Appends the watch events of one batch of stream records (all of it, or throws to have it delivered again). */
export async function appendBatch(
  table: Table,
  records: readonly HistoryRecord[],
  options: HistoryOptions = {},
): Promise<void> {
  const now = options.now ?? Date.now;
  const groups = new Map<string, Group>();
  const inBatch = new Set<string>();
  for (const record of records) {
    // A record is one change, whatever a delivery repeats.
    if (inBatch.has(record.id)) continue;
    inBatch.add(record.id);
    for (const { namespace, resource, event } of changesOf(record.oldImage, record.newImage)) {
      const key = groupKey(namespace, resource);
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { namespace, resource, records: [] }));
      const last = group.records[group.records.length - 1];
      if (last?.id === record.id) last.events.push(event);
      else group.records.push({ id: record.id, events: [event] });
    }
  }
  if (groups.size === 0) return;
  const heads: Record<string, number> = {};
  const skips = new Map<string, Set<string>>();
  for (const [key, group] of groups) {
    const head = await table.history.headItem(group.namespace, group.resource);
    heads[key] = head.seq;
    skips.set(key, head.skip);
  }
  const batch = records[0]!.id;
  const earlier = await table.history.startBatch(
    batch,
    heads,
    Math.floor(now() / 1000) + BATCH_MARKER_SECONDS,
  );
  // What earlier deliveries of this batch appended (record → entry), in every collection they touched.
  const done = new Map<string, Map<string, number>>();
  for (const [key, from] of Object.entries(earlier ?? {}))
    done.set(key, await appendedBefore(table, collectionOf(key), batch, from));
  for (const [key, group] of groups) {
    const skip = skips.get(key)!;
    const skipped = new Set([...skip].map(skipRecord));
    const already = done.get(key);
    const pending = group.records.filter((record) => !already?.has(record.id) && !skipped.has(record.id));
    const entryOf = new Map(already);
    let seq = heads[key]!;
    for (const chunk of chunksOf(pending)) {
      seq = await appendEntry(table, group, batch, chunk, now(), seq + 1);
      for (const record of chunk) entryOf.set(record.id, seq);
    }
    await indexGroup(table, group, entryOf, now());
    const stale = [...skip].filter(
      (element) => skipHour(element) < Math.floor(now() / 3_600_000) - SKIP_HOURS,
    );
    await table.history.updateSkip(group.namespace, group.resource, [], stale);
    if (options.prune) await pruneGroup(table, group, now());
  }
  // Records an earlier delivery appended past the end of this one: the delivery after this starts
  // among them, under another first record, and must leave them out.
  const hour = Math.floor(now() / 3_600_000);
  for (const [key, appended] of done) {
    const beyond = [...appended.keys()].filter((id) => !inBatch.has(id)).map((id) => `${hour}:${id}`);
    const { namespace, resource } = collectionOf(key);
    await table.history.updateSkip(namespace, resource, beyond, []);
  }
}

/** The records of this batch that an earlier delivery appended to a collection, after head `from`. */
async function appendedBefore(
  table: Table,
  collection: { namespace: string; resource: Resource },
  batch: string,
  from: number,
): Promise<Map<string, number>> {
  const done = new Map<string, number>();
  for (let seq = from; ;) {
    const entries = await table.history.after(collection.namespace, collection.resource, seq, 100);
    for (const entry of entries)
      if (entry.batch === batch) for (const id of entry.records) done.set(id, entry.seq);
    if (entries.length < 100) return done;
    seq = entries[entries.length - 1]!.seq;
  }
}

/**
 * Records each object's last state in this batch, with the entry that holds it, in the collection's index
 * (service/history/snapshot.ts): after the entries, so an index a list reads holds no state whose entry it
 * cannot read. A record an earlier, longer delivery appended past this one's end is left to that one.
 */
async function indexGroup(table: Table, group: Group, entryOf: Map<string, number>, now: number) {
  const last = new Map<string, { seq: number; event: HistoryEvent }>();
  for (const record of group.records) {
    const seq = entryOf.get(record.id);
    if (seq === undefined) continue;
    for (const event of record.events)
      last.set((event.object.metadata as { name: string }).name, { seq, event });
  }
  const expiresAt = Math.ceil(now / 1000) + BATCH_MARKER_SECONDS;
  // Each object's item apart, 25 at once: a batch waits for a round trip per 25 objects, not per object.
  await eachAtMost([...last], 25, ([name, { seq, event }]) =>
    table.history.indexObject(
      group.namespace,
      group.resource,
      name,
      seq,
      indexedState(event, event.type === 'DELETED'),
      expiresAt,
    ),
  );
}

/** Whole records' events per entry, within the entry's event count and size. */
function* chunksOf(records: Group['records']): Generator<Group['records']> {
  let chunk: Group['records'] = [];
  let events = 0;
  let bytes = 0;
  for (const record of records) {
    const size = JSON.stringify(record.events).length;
    if (
      chunk.length > 0 &&
      (events + record.events.length > EVENTS_PER_ENTRY || bytes + size > ENTRY_BYTES)
    ) {
      yield chunk;
      chunk = [];
      events = 0;
      bytes = 0;
    }
    chunk.push(record);
    events += record.events.length;
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

async function appendEntry(
  table: Table,
  group: Group,
  batch: string,
  chunk: Group['records'],
  at: number,
  seq: number,
  reset = false,
): Promise<number> {
  const entry: HistoryEntry = {
    seq,
    at,
    batch,
    records: chunk.map((record) => record.id),
    events: chunk.flatMap((record) => record.events),
    ...(reset ? { reset: true as const } : {}),
  };
  const expiresAt = Math.ceil((at + HISTORY_RETENTION_MS) / 1000);
  for (;;) {
    if (await table.history.put(group.namespace, group.resource, entry, expiresAt)) break;
    // The number is taken: by this very put, answered late and retried by the SDK, or by another appender.
    const there = await table.history.entry(group.namespace, group.resource, entry.seq);
    if (there?.batch === batch && there.records[0] === entry.records[0] && there.reset === entry.reset) break;
    entry.seq = (await currentHead(table, group.namespace, group.resource)) + 1;
  }
  await table.history.raiseHead(group.namespace, group.resource, entry.seq);
  return entry.seq;
}

async function pruneGroup(table: Table, group: Group, now: number): Promise<void> {
  let pruned = lastPrune.get(table);
  if (!pruned) lastPrune.set(table, (pruned = new Map()));
  const key = groupKey(group.namespace, group.resource);
  if ((pruned.get(key) ?? 0) > now - 60_000) return;
  pruned.set(key, now);
  while ((await table.history.prune(group.namespace, group.resource, now - HISTORY_RETENTION_MS)) > 0);
}

/**
 * The resourceVersion of a list of the collection, read before its pages (see 4. above): after the
 * head for pools and claims, after the last entry older than INDEX_SETTLE_MS for allocation objects.
 */
export async function listVersion(
  table: Table,
  namespace: string,
  resource: Resource,
  fromIndex: boolean,
  now: number = Date.now(),
): Promise<number> {
  const head = await table.history.head(namespace, resource);
  return fromIndex ? settledVersion(table, namespace, resource, head, now) : afterEntry(head);
}

/** After the newest entry appended INDEX_SETTLE_MS ago; failing that, the one below the oldest kept. */
async function settledVersion(
  table: Table,
  namespace: string,
  resource: Resource,
  head: number,
  now: number,
): Promise<number> {
  if (head === 0) return afterEntry(head);
  let lowest = head + 1;
  for (let atMost = head; atMost > 0;) {
    const entries = await table.history.newestFirst(namespace, resource, atMost, 25);
    for (const entry of entries) {
      if (entry.at <= now - INDEX_SETTLE_MS) return afterEntry(entry.seq);
      lowest = entry.seq;
    }
    if (entries.length < 25) break;
    atMost = lowest - 1;
  }
  return afterEntry(lowest - 1);
}

/**
 * Marks every collection of these namespaces as having lost what came before (an entry with `reset`):
 * a watch from an older position answers 410 and its client lists again. For the local server, whose
 * history reader keeps no journal, on every start with a data folder: records it had not appended
 * when the last run ended are gone.
 */
export async function resetHistories(
  table: Table,
  namespaces: readonly string[],
  resources: readonly Resource[],
  now: number = Date.now(),
): Promise<void> {
  for (const namespace of namespaces)
    for (const resource of resources) {
      const group: Group = { namespace, resource, records: [] };
      const seq = await appendEntry(
        table,
        group,
        `reset-${now}`,
        [],
        now,
        (await currentHead(table, namespace, resource)) + 1,
        true,
      );
      await indexAfresh(table, namespace, resource, seq, now);
    }
}

/**
 * The collection's index made again from the objects as they are (after a reset: the records the
 * history lost may have changed them), at the reset's entry, so a list finds its objects there.
 */
async function indexAfresh(table: Table, namespace: string, resource: Resource, seq: number, now: number) {
  const expiresAt = Math.ceil(now / 1000) + BATCH_MARKER_SECONDS;
  const present = new Set<string>();
  for (let after: string | undefined, first = true; first || after !== undefined; first = false) {
    const page = isAllocationResource(resource)
      ? await table.lists.allocations(namespace, resource, undefined, 500, after)
      : await table.lists.objects<Record<string, unknown>>(namespace, resource, 500, after);
    for (const item of page.items) {
      const visible = visibleOf(item as unknown as Record<string, unknown>);
      if (!visible) continue;
      const name = (visible.state.object.metadata as { name: string }).name;
      present.add(name);
      await table.history.indexObject(
        namespace,
        resource,
        name,
        seq,
        indexedState(visible.state, false),
        expiresAt,
      );
    }
    after = page.last;
  }
  for (const [name, state] of (await table.history.indexed(namespace, resource)).states)
    if (!present.has(name) && !state.gone)
      await table.history.indexObject(namespace, resource, name, seq, { ...state, gone: true }, expiresAt);
}
