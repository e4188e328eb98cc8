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
  kindOfResource,
  poolInfoByAllocationResource,
  type Resource,
} from '../../domain/kinds.ts';
import type { ApiObject } from '../../domain/objects/objects.ts';
import type { PoolRecord } from '../../domain/objects/records.ts';
import { eventFor, withValidity, type WatchEventType } from '../../domain/lists/watch.ts';
import type { HistoryEntry } from '../../store/history.ts';
import type { ClaimContext } from '../context.ts';
import {
  currentHead,
  EVENTS_PER_ENTRY,
  HISTORY_RETENTION_MS,
  positionOf,
  versionOf,
} from '../history/changes.ts';
import { namespaceOf, poolOf, type OperationRequest, type WatchOptions } from './common.ts';

export type { WatchOptions };
import { collectionPage, listPlan, snapshotPage, type ListPlan } from './lists.ts';

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

/** What a watch's query asks for, checked: whether it wants bookmarks, when it ends, where it starts. */
function watchQuery(query: OperationRequest['query'], options: WatchOptions) {
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
  return { bookmarks, deadline, start: startOf(query) };
}

/** A watch's answer: its lines, as they go out. */
class WatchAnswer {
  written = 0;
  private bytes = 0;
  /** Whether the answer's status is out (a stream's head, or a line): a failure then goes as an ERROR. */
  committed = false;

  constructor(
    private readonly options: WatchOptions,
    private readonly kind: string,
  ) {}

  open(): void {
    if (!this.options.open) return;
    this.options.open();
    this.committed = true;
  }

  write(type: WatchEventType | 'BOOKMARK' | 'ERROR', object: unknown): void {
    const line = JSON.stringify({ type, object });
    this.options.write(line);
    this.written++;
    this.bytes += line.length + 1;
    this.committed = true;
  }

  full(): boolean {
    return this.options.maxBytes !== undefined && this.bytes >= this.options.maxBytes;
  }

  bookmark(version: number): void {
    this.write('BOOKMARK', {
      kind: this.kind,
      apiVersion: API_VERSION,
      metadata: { resourceVersion: String(version) },
    });
  }
}

type ObjectAt = (object: ApiObject, version: number) => Promise<ApiObject>;

/**
 * An object as a watch shows it at a version: an allocation object with its validity (its pool read once
 * per answer), the version as its resourceVersion, presented as the client asked.
 */
function objectPresenter(
  ctx: ClaimContext,
  namespace: string,
  resource: Resource,
  options: WatchOptions,
): ObjectAt {
  const info = poolInfoByAllocationResource(resource);
  const pools = new Map<string, PoolRecord | undefined>();
  return async (object, version) => {
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
}

/** One watch under way: what it reads, how it answers, and how far it got. */
interface Watch {
  ctx: ClaimContext;
  namespace: string;
  resource: Resource;
  plan: ListPlan;
  options: WatchOptions;
  bookmarks: boolean;
  deadline: number;
  answer: WatchAnswer;
  objectAt: ObjectAt;
  /** How far the history is read, past the events the selectors leave out. */
  position: number;
  /** What the client already has: the position it asked from, or the one its last line carries. */
  lastLine: number;
  lastLineAt: number;
}

export async function watchCollection(
  resource: Resource,
  request: OperationRequest,
  ctx: ClaimContext,
  options: WatchOptions,
): Promise<void> {
  const namespace = namespaceOf(request);
  const plan = listPlan(request, resource);
  const { bookmarks, deadline, start } = watchQuery(request.query, options);
  const answer = new WatchAnswer(options, kindOfResource(resource));
  const objectAt = objectPresenter(ctx, namespace, resource, options);
  const lastLineAt = Date.now();
  try {
    let position = start;
    if (position === undefined) {
      answer.open();
      position = await currentObjects(ctx, namespace, resource, plan, answer, objectAt);
    }
    const watch = { ctx, namespace, resource, plan, options, bookmarks, deadline, answer, objectAt };
    // The client has what it asked from, or what the current objects carry.
    await followHistory({ ...watch, position, lastLine: position, lastLineAt });
  } catch (error) {
    // Once the status is out, the failure goes as an ERROR event, as Kubernetes sends it.
    if (!answer.committed) throw error;
    answer.write('ERROR', toAllotError(error).toStatus());
  }
}

/**
 * Kubernetes' "start at the most recent": the point first, then an ADDED for each object as it is.
 * Returns the point, where the watch goes on from.
 */
async function currentObjects(
  ctx: ClaimContext,
  namespace: string,
  resource: Resource,
  plan: ListPlan,
  answer: WatchAnswer,
  objectAt: ObjectAt,
): Promise<number> {
  // The first page as a list answers it (where it stands in the history), the others after it. It does
  // not wait for the history (a watch starts at once, as a Kubernetes one does): a state still on its
  // way makes it name the head read before the page, whose changes it may then answer again.
  const first = await snapshotPage({ ...ctx, listWaitMs: 0 }, namespace, resource, plan, 500);
  for (const object of first.items) answer.write('ADDED', await objectAt(object, first.version));
  for (let after = first.last; after !== undefined;) {
    const page = await collectionPage(ctx, namespace, resource, plan, 500, after);
    for (const object of page.items) answer.write('ADDED', await objectAt(object, first.version));
    after = page.last;
  }
  const position = first.version;
  return position;
}

/**
 * Reads the history from the watch's position and writes what its selectors select, until the deadline,
 * the client leaving, the answer filling up, or (a long poll) its first events.
 */
async function followHistory(watch: Watch): Promise<void> {
  const { ctx, namespace, resource, options, answer } = watch;
  let validated = false;
  for (;;) {
    const { seq, index } = positionOf(watch.position);
    const midEntry = index < EVENTS_PER_ENTRY && seq > 0;
    const entries = await ctx.table.history.after(
      namespace,
      resource,
      midEntry ? seq - 1 : seq,
      ENTRIES_PER_READ,
    );
    if (!validated) {
      await checkKept(ctx, namespace, resource, watch.position, entries);
      validated = true;
      answer.open();
    }
    if (!(await writeEntries(watch, seq, entries))) break;
    if (options.signal?.aborted) return;
    const now = Date.now();
    if (now >= watch.deadline) break;
    if (entries.length === ENTRIES_PER_READ) continue;
    if (options.endAfterEvents && answer.written > 0) break;
    if (watch.bookmarks && watch.position > watch.lastLine && now - watch.lastLineAt >= BOOKMARK_EVERY_MS) {
      answer.bookmark(watch.position);
      watch.lastLine = watch.position;
      watch.lastLineAt = now;
    }
    await sleep(Math.min(options.pollMs, watch.deadline - now), options.signal);
    if (options.signal?.aborted) return;
  }
  // Where this answer got to, past events its selectors left out, so the next watch starts there.
  if (watch.bookmarks && watch.position > watch.lastLine) answer.bookmark(watch.position);
}

/**
 * Writes the selected events of entries read after `seq`, moving the watch's position past each event.
 * False when the answer is full: it ends after a whole event, and the next one starts there.
 */
async function writeEntries(watch: Watch, seq: number, entries: HistoryEntry[]): Promise<boolean> {
  for (const entry of entries) {
    if (entry.reset && entry.seq > seq) throw expired(watch.position, entry.seq);
    for (let i = 0; i < entry.events.length; i++) {
      const version = versionOf({ seq: entry.seq, index: i + 1 });
      if (version <= watch.position) continue;
      if (watch.answer.full()) return false;
      const seen = eventFor(watch.plan.selection, entry.events[i]!);
      if (seen) {
        watch.answer.write(seen.type, await watch.objectAt(seen.state.object, version));
        watch.lastLine = version;
        watch.lastLineAt = Date.now();
      }
      watch.position = version;
    }
    watch.position = Math.max(watch.position, versionOf({ seq: entry.seq, index: EVENTS_PER_ENTRY }));
  }
  return true;
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
