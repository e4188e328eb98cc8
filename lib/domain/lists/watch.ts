/**
 * What a watch sees of a change to the table (api.md, "Routes", watch): the stored item before and after
 * a write, as the API objects a client reads, turned into Kubernetes watch events. Pure.
 *
 * An item is an API object when it is a pool, a claim or an allocation object (`t`); stubs, holds,
 * summaries and every other item are not, so a write that turns one into another (a claim written over
 * its stub, a hold that replaced an allocation object) is an ADDED or a DELETED. A write that changes
 * nothing a client reads (a claim's offers, a pool's search hints) is no event at all.
 */
import { poolInfoByAllocationKind, poolKindInfo, type Resource } from '../kinds.ts';
import {
  allocationObject,
  claimObject,
  poolObject,
  validCondition,
  type ApiObject,
} from '../objects/objects.ts';
import type { AllocationRecord, ClaimRecord, PoolRecord } from '../objects/records.ts';
import { createHash } from 'node:crypto';
import { canonicalJson, sameData } from '../objects/records.ts';
import { selects, type Selection } from './selection.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** An API object as a history keeps it, with what selection reads that the object does not show. */
export interface ObjectState {
  /** The object as a GET shows it; allocation objects without `status` (it is made from the pool). */
  object: ApiObject;
  /** A claim's phase (`status.phase` of a field selector). */
  phase?: string;
}

/** One change of one object, as a history keeps it. */
export interface HistoryEvent extends ObjectState {
  type: WatchEventType;
  /** The object before a MODIFIED, when labels or selectable fields changed (so a watch with a
   * selector knows whether it matched before). */
  before?: ObjectState;
  /** A MODIFIED's object before it, as its fingerprint (lists/snapshot.ts finds where a list's objects stand). */
  prev?: string;
}

/** A change to one namespace's collection of one resource. */
export interface CollectionChange {
  namespace: string;
  resource: Resource;
  event: HistoryEvent;
}

interface Visible {
  resource: Resource;
  state: ObjectState;
  uid: string;
}

/** The API object an item is, if it is one. */
export function visibleOf(item: Record<string, unknown> | undefined): Visible | undefined {
  if (!item) return undefined;
  try {
    if (item.t === 'pool') {
      const pool = item as unknown as PoolRecord;
      const info = poolKindInfo(pool.kind);
      if (!info) return undefined;
      return { resource: info.resource, state: { object: poolObject(pool) }, uid: pool.metadata.uid };
    }
    if (item.t === 'claim') {
      const claim = item as unknown as ClaimRecord;
      return {
        resource: 'claims',
        state: { object: claimObject(claim), phase: claim.phase },
        uid: claim.metadata.uid,
      };
    }
    if (item.t === 'alloc') {
      const allocation = item as unknown as AllocationRecord;
      const info = poolInfoByAllocationKind(allocation.kind);
      if (!info) return undefined;
      const { status: _status, ...object } = allocationObject(allocation, undefined);
      return { resource: info.allocationResource, state: { object }, uid: allocation.metadata.uid };
    }
  } catch {
    // an item this code cannot read as an object (a defect elsewhere) is no object to watch
  }
  return undefined;
}

const namespaceOf = (state: ObjectState) =>
  (state.object.metadata as { namespace: string } | undefined)?.namespace ?? '';

/** What selection reads of a state, the same before and after when this is unchanged. */
function selectable(state: ObjectState) {
  const object = state.object as {
    metadata?: { labels?: unknown; name?: unknown };
    spec?: { poolRef?: { name?: unknown } };
  };
  return [object.metadata?.name, object.metadata?.labels ?? {}, object.spec?.poolRef?.name, state.phase];
}

/** The watch events of one write: none, one, or a DELETED and an ADDED when the key changed hands. */
export function changesOf(
  oldItem: Record<string, unknown> | undefined,
  newItem: Record<string, unknown> | undefined,
): CollectionChange[] {
  const before = visibleOf(oldItem);
  const after = visibleOf(newItem);
  const change = (state: ObjectState, resource: Resource, event: HistoryEvent): CollectionChange => ({
    namespace: namespaceOf(state),
    resource,
    event,
  });
  if (before && after && before.resource === after.resource && before.uid === after.uid) {
    if (sameData(before.state, after.state)) return [];
    const event: HistoryEvent = { type: 'MODIFIED', ...after.state, prev: fingerprint(before.state.object) };
    if (!sameData(selectable(before.state), selectable(after.state))) event.before = before.state;
    return [change(after.state, after.resource, event)];
  }
  const changes: CollectionChange[] = [];
  if (before) changes.push(change(before.state, before.resource, { type: 'DELETED', ...before.state }));
  if (after) changes.push(change(after.state, after.resource, { type: 'ADDED', ...after.state }));
  return changes;
}

/**
 * An object's state, short: the same for the same object whatever order its maps' keys are in. An
 * allocation object's status is left out, as the history keeps it (it is made from the pool when shown).
 */
export function fingerprint(object: ApiObject): string {
  const { status, ...rest } = object;
  const kept = poolInfoByAllocationKind(object.kind as string) ? rest : { ...rest, status };
  return createHash('sha256')
    .update(canonicalJson(kept) ?? '')
    .digest('base64url')
    .slice(0, 16);
}

export const selectableRecord = (state: ObjectState) => ({
  metadata: state.object.metadata as { name: string; namespace: string; labels?: Record<string, string> },
  spec: state.object.spec as { poolRef?: { name?: string } } | undefined,
  phase: state.phase,
});

/**
 * What a watcher with `selection` sees of an event, as Kubernetes' watch cache decides: an object that
 * starts matching is ADDED, one that stops matching is DELETED (with the object as it was), one that
 * never matched is nothing.
 */
export function eventFor(
  selection: Selection,
  event: HistoryEvent,
): { type: WatchEventType; state: ObjectState } | undefined {
  const now = selects(selection, selectableRecord(event));
  if (event.type !== 'MODIFIED') return now ? { type: event.type, state: event } : undefined;
  const was = event.before ? selects(selection, selectableRecord(event.before)) : now;
  if (now) return { type: was ? 'MODIFIED' : 'ADDED', state: event };
  return was ? { type: 'DELETED', state: event.before ?? event } : undefined;
}

/** An allocation object from a history, with its `Valid` condition made from the pool as it is now. */
export function withValidity(object: ApiObject, pool: PoolRecord | undefined): ApiObject {
  const info = poolInfoByAllocationKind(object.kind as string);
  if (!info) return object;
  const spec = object.spec as { poolRef: { name: string; kind: string } } & Record<string, unknown>;
  const record = {
    t: 'alloc',
    kind: info.allocationKind,
    metadata: object.metadata,
    spec: { poolRef: spec.poolRef },
    value: String(spec[info.valueField]),
  } as unknown as AllocationRecord;
  return { ...object, status: { conditions: [validCondition(record, pool)] } };
}
