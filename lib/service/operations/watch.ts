/**
 * `?watch=true` on a list (api.md, "Routes", watch): the changes of a namespace's collection after a
 * resourceVersion, one JSON line each (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`), read from the
 * collection's history (service/history/changes.ts, where the argument for order and exactly-once is).
 *
 * An answer streams until its deadline (the local server: as the changes come, within a second), or ends
 * after its first events (a long poll behind API Gateway, whose HTTP API cuts any answer at 30 s); a
 * client watches again from the last resourceVersion it got, as client-go and kubectl do. Without a
 * resourceVersion (or with "0"), the answer starts with an ADDED for every object selected, as in
 * Kubernetes. A position the history no longer holds answers 410 Expired: the client lists again.
 */
import { BadRequestError, ExpiredError, toAllotError } from '../../domain/errors.ts';
import {
  API_VERSION,
  isAllocationResource,
  kindOfResource,
  poolInfoByAllocationResource,
  type Resource,
} from '../../domain/kinds.ts';
import type { ApiObject } from '../../domain/objects.ts';
import type { PoolRecord } from '../../domain/records.ts';
import { eventFor, withValidity, type WatchEventType } from '../../domain/watch.ts';
import type { HistoryEntry } from '../../store/history.ts';
import type { ClaimContext } from '../context.ts';
import {
  currentHead,
  EVENTS_PER_ENTRY,
  HISTORY_RETENTION_MS,
  listVersion,
  positionOf,
  versionOf,
} from '../history/changes.ts';
import { namespaceOf, poolOf, type OperationRequest, type WatchOptions } from './common.ts';

export type { WatchOptions };
import { collectionPage, listPlan } from './lists.ts';

/** How often a streaming answer that asked for bookmarks gets one while its events are filtered out. */
const BOOKMARK_EVERY_MS = 30_000;
/** Entries read per request of the history. */
const ENTRIES_PER_READ = 25;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

function flag(query: OperationRequest['query'], name: string): boolean {
  const value = query[name];
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new BadRequestError(`${name} must be true or false`);
}

/** Whether a list request is a watch (`watch=true`); a malformed `watch` is the caller's 400. */
export function isWatch(query: OperationRequest['query']): boolean {
  return flag(query, 'watch');
}

/** The position a watch starts after, or undefined for "now, with the current objects first". */
function startOf(query: OperationRequest['query']): number | undefined {
  const text = query.resourceVersion;
  if (text === undefined || text === '' || text === '0') return undefined;
  if (!/^[0-9]{1,16}$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new BadRequestError(
      `resourceVersion ${JSON.stringify(text.slice(0, 40))} is not one this API answered`,
    );
  return Number(text);
}

export async function watchCollection(
  resource: Resource,
  request: OperationRequest,
  ctx: ClaimContext,
  options: WatchOptions,
): Promise<void> {
  const namespace = namespaceOf(request);
  const plan = listPlan(request, resource);
  const { query } = request;
  const bookmarks = flag(query, 'allowWatchBookmarks');
  if (flag(query, 'sendInitialEvents'))
    throw new BadRequestError(
      "sendInitialEvents is not served; list, then watch from the list's resourceVersion",
    );
  if (query.resourceVersionMatch) throw new BadRequestError('resourceVersionMatch is not served on a watch');
  const timeout = query.timeoutSeconds;
  if (timeout !== undefined && !/^[0-9]{1,9}$/.test(timeout))
    throw new BadRequestError('timeoutSeconds must be a whole number of seconds');
  const started = Date.now();
  const deadline = started + Math.min(options.maxMs, Number(timeout) > 0 ? Number(timeout) * 1000 : Infinity);
  const kind = kindOfResource(resource);
  const info = poolInfoByAllocationResource(resource);
  const pools = new Map<string, PoolRecord | undefined>();
  let written = 0;
  let bytes = 0;
  // Whether the answer's status is out (a stream's head, or a line): a failure then goes as an ERROR.
  let committed = false;
  const open = () => {
    if (!options.open) return;
    options.open();
    committed = true;
  };
  const write = (type: WatchEventType | 'BOOKMARK' | 'ERROR', object: unknown) => {
    const line = JSON.stringify({ type, object });
    options.write(line);
    written++;
    bytes += line.length + 1;
    committed = true;
  };
  const full = () => options.maxBytes !== undefined && bytes >= options.maxBytes;
  const objectAt = async (object: ApiObject, version: number): Promise<ApiObject> => {
    let shown = object;
    if (info) {
      const poolName = (object.spec as { poolRef: { name: string } }).poolRef.name;
      if (!pools.has(poolName)) pools.set(poolName, await poolOf(ctx, namespace, info, poolName));
      shown = withValidity(object, pools.get(poolName));
    }
    const versioned = {
      ...shown,
      metadata: { ...(shown.metadata as object), resourceVersion: String(version) },
    };
    return (options.present?.(versioned) ?? versioned) as ApiObject;
  };
  const bookmark = (version: number) =>
    write('BOOKMARK', { kind, apiVersion: API_VERSION, metadata: { resourceVersion: String(version) } });

  let position = startOf(query);
  let validated = false;
  // What the client already has: the position it asked from, or the one its first events carry.
  let lastLine = position ?? 0;
  let lastLineAt = Date.now();
  try {
    if (position === undefined) {
      open();
      // Kubernetes' "start at the most recent": the point first, then the objects as they are.
      position = await listVersion(ctx.table, namespace, resource, isAllocationResource(resource));
      lastLine = position;
      for (let after: string | undefined, first = true; first || after !== undefined; first = false) {
        const page = await collectionPage(ctx, namespace, resource, plan, 500, after);
        for (const object of page.items) write('ADDED', await objectAt(object, position));
        after = page.last;
      }
    }
    read: for (;;) {
      const { seq, index } = positionOf(position);
      const midEntry = index < EVENTS_PER_ENTRY && seq > 0;
      const entries = await ctx.table.history.after(
        namespace,
        resource,
        midEntry ? seq - 1 : seq,
        ENTRIES_PER_READ,
      );
      if (!validated) {
        await checkKept(ctx, namespace, resource, position, entries);
        validated = true;
        open();
      }
      for (const entry of entries) {
        if (entry.reset && entry.seq > seq) throw expired(position, entry.seq);
        for (let i = 0; i < entry.events.length; i++) {
          const version = versionOf({ seq: entry.seq, index: i + 1 });
          if (version <= position) continue;
          // An answer as large as it may be ends after a whole event: the next one starts there.
          if (full()) break read;
          const seen = eventFor(plan.selection, entry.events[i]!);
          if (seen) {
            write(seen.type, await objectAt(seen.state.object, version));
            lastLine = version;
            lastLineAt = Date.now();
          }
          position = version;
        }
        position = Math.max(position, versionOf({ seq: entry.seq, index: EVENTS_PER_ENTRY }));
      }
      if (options.signal?.aborted) return;
      const now = Date.now();
      if (now >= deadline) break;
      if (entries.length === ENTRIES_PER_READ) continue;
      if (options.endAfterEvents && written > 0) break;
      if (bookmarks && position > lastLine && now - lastLineAt >= BOOKMARK_EVERY_MS) {
        bookmark(position);
        lastLine = position;
        lastLineAt = now;
      }
      await sleep(Math.min(options.pollMs, deadline - now), options.signal);
      if (options.signal?.aborted) return;
    }
    // Where this answer got to, past events its selectors left out, so the next watch starts there.
    if (bookmarks && position > lastLine) bookmark(position);
  } catch (error) {
    // Once the status is out, the failure goes as an ERROR event, as Kubernetes sends it.
    if (!committed) throw error;
    write('ERROR', toAllotError(error).toStatus());
  }
}

const expired = (position: number, kept: number) =>
  new ExpiredError(`too old resource version: ${position} (${versionOf({ seq: kept, index: 0 })})`);

/**
 * Whether the history still holds everything after `position` (service/history/changes.ts, 5.): the next entry
 * is there and within the retention, or nothing came after and the position is the head.
 */
async function checkKept(
  ctx: ClaimContext,
  namespace: string,
  resource: Resource,
  position: number,
  entries: HistoryEntry[],
): Promise<void> {
  const { seq, index } = positionOf(position);
  const kept = (entry: HistoryEntry | undefined) =>
    entry !== undefined && entry.at >= Date.now() - HISTORY_RETENTION_MS;
  if (index < EVENTS_PER_ENTRY && seq > 0 && !(entries[0]?.seq === seq && kept(entries[0])))
    throw expired(position, entries[0]?.seq ?? seq);
  const next = entries.find((entry) => entry.seq > seq);
  if (next) {
    if (next.seq !== seq + 1 || !kept(next)) throw expired(position, next.seq);
    return;
  }
  const head = await currentHead(ctx.table, namespace, resource);
  if (head < seq)
    throw new ExpiredError(
      `resource version ${position} is newer than this history (${versionOf({ seq: head, index: EVENTS_PER_ENTRY })})`,
    );
  if (head > seq) throw expired(position, head);
}
