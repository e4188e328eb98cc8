/**
 * Where a list stands in its collection's history (service/history/snapshot.ts has the reads and the
 * argument): the table's page is read at one moment, the history (positions, events) catches up a moment
 * later, and a watch from the list's resourceVersion must answer none of what the list shows and every
 * change after it. So the list becomes the history's state at one position R: each object's shown state
 * is found in its own chain of events, and events up to R are applied to the page. Pure.
 *
 * An object's chain is its events after the base (a position whose history is indexed: `indexed` holds
 * each object's last state at or below it). Its states are s0 (before the first event), s1, … sk; a list
 * that shows state S stands, for that object, at any j with sj = S: every state of the chain after j is
 * applied up to R, so whichever j is taken, the object is shown as the history has it at R. An object the
 * list does not show stands at a state where it is absent or not selected. An object whose shown state is
 * in no chain yet is waited for: its event is still on its way to the history.
 */
import type { ApiObject } from '../objects/objects.ts';
import { selects, type Selection } from './selection.ts';
import { fingerprint, selectableRecord, type HistoryEvent, type ObjectState } from './watch.ts';

/** Not in the list: absent, or there and not selected. */
export const NOT_SHOWN = '-';

/** One object's last state at or below the base, as the history's index keeps it. */
export interface IndexedState {
  fingerprint: string;
  gone: boolean;
  /** What selection reads of it (name, labels, pool, phase). */
  selectable: ObjectState;
}

/** One event of the collection's history, at its position. */
export interface PlacedEvent {
  version: number;
  event: HistoryEvent;
}

export interface SnapshotInput {
  selection: Selection;
  /** The position the chains start after. */
  base: number;
  /** The objects the page shows. */
  shown: readonly ApiObject[];
  indexed: ReadonlyMap<string, IndexedState>;
  /**
   * Whether `indexed` is the whole index (else only the objects shown): an object not shown that the
   * index holds as there is then waited for; without the whole index, its DELETED may come in a watch.
   */
  indexComplete?: boolean;
  /** Every event after the base the history holds, in order, up to `readTo`. */
  events: readonly PlacedEvent[];
  /** How far the history was read (a position at or above the base). */
  readTo: number;
  /** Objects not shown that are not waited for (a claim whose lease ended: its DELETED comes later). */
  leftOut?: ReadonlySet<string>;
  /**
   * Objects not shown whose last state in the history is: whether the table shows them now (selected).
   * One there now was made after the page was read; one gone went before it, and its change is waited for.
   */
  visibleNow?: ReadonlyMap<string, boolean>;
  /**
   * An object made before this (RFC 3339) that the index has never held is taken as it is shown: made
   * before the index was kept (an upgrade), its state is at or below the base unless it changed since.
   */
  unindexedBefore?: string;
}

export type Snapshot =
  | {
      version: number;
      /** By name, what the list shows at `version` instead of the page: an object, or null for none. */
      changes: Map<string, ObjectState | null>;
    }
  | {
      waitingFor: string[];
      /** Objects not shown, last in the history shown: is each in the table now? (`visibleNow`) */
      toCheck: string[];
    };

/** What the history's index keeps of an object's state (`gone`: the state it was deleted in). */
export function indexedState(state: ObjectState, gone: boolean): IndexedState {
  const { metadata, spec } = state.object as {
    metadata: { name: string; namespace: string; labels?: Record<string, string> };
    spec?: { poolRef?: { name?: string } };
  };
  const object = {
    metadata: { name: metadata.name, namespace: metadata.namespace, labels: metadata.labels ?? {} },
    ...(spec?.poolRef?.name !== undefined && { spec: { poolRef: { name: spec.poolRef.name } } }),
  } as unknown as ApiObject;
  return {
    fingerprint: fingerprint(state.object),
    gone,
    selectable: { object, ...(state.phase !== undefined && { phase: state.phase }) },
  };
}

const nameOf = (object: { metadata?: unknown }) => (object.metadata as { name: string }).name;

const viewOf = (selection: Selection, state: ObjectState) =>
  selects(selection, selectableRecord(state)) ? fingerprint(state.object) : NOT_SHOWN;

/** What a list with `selection` shows of an object before the event (undefined: not known). */
function viewBefore(selection: Selection, event: HistoryEvent): string | undefined {
  if (event.type === 'ADDED') return NOT_SHOWN;
  if (event.type === 'DELETED') return viewOf(selection, event);
  if (event.prev === undefined) return undefined;
  return selects(selection, selectableRecord(event.before ?? event)) ? event.prev : NOT_SHOWN;
}

const viewAfter = (selection: Selection, event: HistoryEvent) =>
  event.type === 'DELETED' ? NOT_SHOWN : viewOf(selection, event);

/** Where the list stands in the history, or the objects it waits for. */
export function snapshotOf(input: SnapshotInput): Snapshot {
  const { selection, base } = input;
  const chains = new Map<string, PlacedEvent[]>();
  for (const placed of input.events) {
    if (placed.version <= base) continue;
    const name = nameOf(placed.event.object);
    chains.set(name, [...(chains.get(name) ?? []), placed]);
  }
  const shown = new Map(input.shown.map((object) => [nameOf(object), fingerprint(object)]));
  const created = new Map(
    input.shown.map((object) => [
      nameOf(object),
      (object.metadata as { creationTimestamp?: string }).creationTimestamp,
    ]),
  );
  const names = new Set([...shown.keys(), ...chains.keys()]);
  if (input.indexComplete !== false)
    for (const [name, state] of input.indexed)
      if (!state.gone && selects(selection, selectableRecord(state.selectable))) names.add(name);
  const waitingFor: string[] = [];
  const toCheck: string[] = [];
  /** By name, the position after which its events are applied. */
  const standing = new Map<string, number>();
  for (const name of names) {
    const target = shown.get(name) ?? NOT_SHOWN;
    const chain = chains.get(name) ?? [];
    const last = chain[chain.length - 1];
    if (target === NOT_SHOWN && last && viewAfter(selection, last.event) !== NOT_SHOWN) {
      // Not in the page, there in the history: made after the page was read, or gone before it (its
      // change still on its way). Standing where it was not yet made would show it, older than the page.
      const now = input.visibleNow?.get(name);
      if (now === undefined) toCheck.push(name);
      if (now !== true) {
        waitingFor.push(name);
        continue;
      }
    }
    const at = standingIn(selection, chain, target, base);
    if (at !== undefined) standing.set(name, at);
    else if (chain.length === 0 && atBase(input, name, target, created.get(name))) standing.set(name, base);
    else waitingFor.push(name);
  }
  if (waitingFor.length > 0) return { waitingFor, toCheck };
  // Any position at or above every object's standing will do: the furthest read shows the most.
  const version = Math.max(base, input.readTo, ...standing.values());
  const changes = new Map<string, ObjectState | null>();
  for (const [name, chain] of chains) {
    const from = standing.get(name)!;
    const applied = chain.filter((placed) => placed.version > from && placed.version <= version);
    const last = applied[applied.length - 1];
    if (!last) continue;
    changes.set(name, viewAfter(selection, last.event) === NOT_SHOWN ? null : last.event);
  }
  return { version, changes };
}

/** The latest position in the chain where the object is as the list shows it (the base for s0). */
function standingIn(
  selection: Selection,
  chain: readonly PlacedEvent[],
  target: string,
  base: number,
): number | undefined {
  for (let j = chain.length - 1; j >= 0; j--)
    if (viewAfter(selection, chain[j]!.event) === target) return chain[j]!.version;
  if (chain.length > 0 && viewBefore(selection, chain[0]!.event) === target) return base;
  return undefined;
}

/** Whether an object with no event after the base is, at the base, as the list shows it. */
function atBase(input: SnapshotInput, name: string, target: string, created?: string): boolean {
  const indexed = input.indexed.get(name);
  if (target !== NOT_SHOWN) {
    if (indexed === undefined)
      return created !== undefined && input.unindexedBefore !== undefined && created < input.unindexedBefore;
    return !indexed.gone && indexed.fingerprint === target;
  }
  return (
    indexed === undefined ||
    indexed.gone ||
    !selects(input.selection, selectableRecord(indexed.selectable)) ||
    (input.leftOut?.has(name) ?? false)
  );
}
