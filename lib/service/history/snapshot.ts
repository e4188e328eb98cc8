/**
 * A list's resourceVersion, exactly (api.md, "Routes", watch: a watch from a list's resourceVersion
 * answers every change after the list once and none the list showed). A page is read from the table;
 * the history (service/history/changes.ts) gets each change a moment later. So a list of one page does
 * not name the history's head: it finds, in the history, where each object it shows stands, waits for
 * what the history does not hold yet, and becomes the history's state at one position R
 * (domain/lists/snapshot.ts), which it answers as its resourceVersion. A watch from R then answers
 * exactly the events after R, and the list shows exactly those at or below it.
 *
 * Why the objects it shows are the history's state at R:
 *
 * 1. Each object's chain starts after a base: the last entry appended INDEX_SETTLE_MS before the list.
 *    The history function records each object's last state in an index (one item per name) after it
 *    appends the entry holding it; the base is old enough that the index holds every state at or below
 *    it. (If it does not, a list waits and, at worst, answers as item 3 says.)
 * 2. The index is read before the entries: every state the index holds was appended before the entries
 *    are read, so an object with no event above the base read has its index state at or below it.
 * 3. An object shown as the history has no state of yet (its change is on its way) is waited for, until
 *    `listWaitMs` (5 s): the history function is rarely more than a second behind. Past it, or when the
 *    list has more than one page, the list answers as before: the head it read before its page, which
 *    shows every change at or below it; a change the list shows may then come again in a watch from it
 *    (docs/kubectl.md, "Watch"). So is an object the list does not show that the index holds as there
 *    (gone just before the list, its DELETED on its way): waited for. A list reads INDEXED_AT_MOST of the
 *    index's items at most, so its cost stays bounded; past them it reads only the items of the objects
 *    it shows, and such a DELETED may come in the watch from it, of an object it did not show.
 * 4. A claim whose lease ended is left out of lists before it is deleted: the list does not wait for its
 *    DELETED, which a watch from R answers when it comes.
 * 5. Objects made before the index was kept (a deployment upgraded) have no state in it until they
 *    change: one made more than a minute ago, shown, with no event above the base, is taken as it is.
 *    Its change still on its way to the history would then come again in a watch (as 3.). The local
 *    server's history, which loses what it had not read when it stops, makes the index again from the
 *    objects on each start (changes.ts, resetHistories).
 */
import { isAllocationResource, type Resource } from '../../domain/kinds.ts';
import { leaseExpired } from '../../domain/objects/leases.ts';
import { timestamp, type ApiObject } from '../../domain/objects/objects.ts';
import type { ClaimRecord } from '../../domain/objects/records.ts';
import { requiredField, type Selection } from '../../domain/lists/selection.ts';
import { snapshotOf, type PlacedEvent } from '../../domain/lists/snapshot.ts';
import type { ObjectState } from '../../domain/lists/watch.ts';
import { objectKey } from '../../store/keys.ts';
import { nowMs, type ClaimContext } from '../context.ts';
import { afterEntry, positionOf, versionOf } from './changes.ts';

/** How long a list waits for the history to hold the states it shows. */
export const LIST_WAIT_MS = 5_000;
/** A list reads this many of the index's items at most; past them, those of the objects it shows (3.). */
export const INDEXED_AT_MOST = 1_000;
const POLL_MS = 25;
/** An object this old that the index never held was made before it was kept (see 5.). */
const UNINDEXED_AFTER_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nameOf = (object: ApiObject) => (object.metadata as { name: string }).name;

export interface ListSnapshot {
  version: number;
  items: ApiObject[];
}

/**
 * The page as the history's state at one position, and that position; undefined when it cannot be
 * had (3. above). `present` makes a list's object of a state from the history.
 */
export async function snapshotList(
  ctx: ClaimContext,
  collection: { namespace: string; resource: Resource; selection: Selection },
  page: readonly ApiObject[],
  base: number,
  present: (state: ObjectState) => Promise<ApiObject>,
  visible: (name: string) => Promise<boolean>,
): Promise<ListSnapshot | undefined> {
  const { namespace, resource, selection } = collection;
  const deadline = Date.now() + (ctx.listWaitMs ?? LIST_WAIT_MS);
  const events: PlacedEvent[] = [];
  const leftOut = new Set<string>();
  const checked = new Set<string>();
  let readTo = positionOf(base).seq;
  for (let wait = POLL_MS; ; wait = Math.min(wait * 2, 200)) {
    // A list of one name can show nothing else: that name's item is the whole index it needs.
    const named = requiredField(selection, 'metadata.name');
    const index =
      named === undefined
        ? await ctx.table.history.indexed(namespace, resource, INDEXED_AT_MOST)
        : { states: await ctx.table.history.indexedNamed(namespace, resource, [named]), complete: true };
    const indexed = index.complete
      ? index.states
      : await ctx.table.history.indexedNamed(namespace, resource, page.map(nameOf));
    for (;;) {
      const entries = await ctx.table.history.after(namespace, resource, readTo, 100);
      for (const entry of entries) {
        // The history lost what came before (a local server restarted): nothing to stand on.
        if (entry.reset) return undefined;
        entry.events.forEach((event, i) =>
          events.push({ version: versionOf({ seq: entry.seq, index: i + 1 }), event }),
        );
        readTo = entry.seq;
      }
      if (entries.length < 100) break;
    }
    const input = {
      selection,
      base,
      shown: page,
      indexed,
      indexComplete: index.complete,
      events,
      readTo: afterEntry(readTo),
      leftOut,
      unindexedBefore: timestamp(Date.now() - UNINDEXED_AFTER_MS),
    };
    let found = snapshotOf(input);
    // Objects the page did not show and the history last shows: read again each time (one gone may be
    // made again meanwhile).
    if ('toCheck' in found && found.toCheck.length > 0) {
      const visibleNow = new Map<string, boolean>();
      for (const name of found.toCheck) visibleNow.set(name, await visible(name));
      found = snapshotOf({ ...input, visibleNow });
    }
    if ('version' in found)
      return {
        version: found.version,
        items: await applied(page, found.changes, present, !isAllocationResource(resource)),
      };
    if (resource === 'claims') await leaseEnded(ctx, namespace, found.waitingFor, page, checked, leftOut);
    if (Date.now() + wait > deadline) return undefined;
    await sleep(wait);
  }
}

/** The claims among `names` not shown because their lease ended (4. above), each read once. */
async function leaseEnded(
  ctx: ClaimContext,
  namespace: string,
  names: string[],
  page: readonly ApiObject[],
  checked: Set<string>,
  leftOut: Set<string>,
): Promise<void> {
  const shown = new Set(page.map(nameOf));
  for (const name of names) {
    if (shown.has(name) || checked.has(name)) continue;
    checked.add(name);
    const item = await ctx.table.get<ClaimRecord>(objectKey(namespace, 'claims', name));
    if (item?.t === 'claim' && leaseExpired(item, nowMs(ctx))) leftOut.add(name);
  }
}

/**
 * The page with the history's later states in place: pools and claims in name order, as pages are; an
 * allocation object new to the page after the others (pages order them by pool and value).
 */
async function applied(
  page: readonly ApiObject[],
  changes: Map<string, ObjectState | null>,
  present: (state: ObjectState) => Promise<ApiObject>,
  byName: boolean,
): Promise<ApiObject[]> {
  if (changes.size === 0) return [...page];
  const objects = new Map(page.map((object) => [nameOf(object), object]));
  for (const [name, state] of changes) {
    if (state) objects.set(name, await present(state));
    else objects.delete(name);
  }
  const items = [...objects.values()];
  return byName ? items.sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0)) : items;
}
