/**
 * The console's reads: every GET a page makes goes through `read`, which answers from the last reply
 * and fetches when there is none. Each poll fetches again what the last drawing read, so a claim made
 * from the CLI shows within a poll or two, and a page reads nothing it does not show.
 */
import { call, isStatus, type Status } from './api.ts';

export interface Entry<T = any> {
  data?: T;
  error?: Status;
  loading: boolean;
  /** When the last answer came (ms). */
  at?: number;
}

/** An answer older than this is shown and asked for again when a page reads it (on navigation). */
const FRESH_MS = 1000;

const entries = new Map<string, Entry>();
let readSinceDraw = new Set<string>();
let redraw: () => void = () => undefined;
let scheduled = false;

export function onChange(draw: () => void): void {
  redraw = draw;
}

/** Draws once on the next frame, however many answers came in meanwhile. */
export function scheduleDraw(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    readSinceDraw = new Set();
    redraw();
  });
}

export function read<T = any>(path: string): Entry<T> {
  readSinceDraw.add(path);
  let entry = entries.get(path);
  if (!entry) {
    entry = { loading: true };
    entries.set(path, entry);
    void fetchInto(path, entry);
  } else if (!entry.loading && Date.now() - (entry.at ?? 0) > FRESH_MS) {
    void fetchInto(path, entry);
  }
  return entry as Entry<T>;
}

async function fetchInto(path: string, entry: Entry): Promise<void> {
  entry.loading = true;
  const answer = await call('GET', path);
  entry.loading = false;
  entry.at = Date.now();
  if (answer.status === 200 && !isStatus(answer.body)) {
    entry.data = answer.body;
    entry.error = undefined;
  } else {
    entry.error = isStatus(answer.body)
      ? answer.body
      : { kind: 'Status', code: answer.status, reason: 'Unexpected', message: String(answer.body) };
    entry.data = undefined;
  }
  scheduleDraw();
}

/** Fetches again everything the current page shows (the poll, and after every action). */
export async function refresh(): Promise<void> {
  await Promise.all(
    [...readSinceDraw].map((path) => {
      const entry = entries.get(path);
      return entry && !entry.loading ? fetchInto(path, entry) : undefined;
    }),
  );
}

/** Forgets answers under a path prefix (after a delete, so a gone object is not shown from memory). */
export function forget(prefix: string): void {
  for (const path of entries.keys()) if (path.startsWith(prefix)) entries.delete(path);
}

/** Pages through a list (limit 1000 a page, at most `pages` pages); the console's lists are bounded. */
export function readAll<T = any>(path: string): Entry<T[]> & { truncated: boolean } {
  const separator = path.includes('?') ? '&' : '?';
  const first = read<{ items: T[]; metadata?: { continue?: string } }>(`${path}${separator}limit=1000`);
  if (!first.data) return { ...first, data: undefined, truncated: false };
  return { ...first, data: first.data.items, truncated: Boolean(first.data.metadata?.continue) };
}
