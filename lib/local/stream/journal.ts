/**
 * The local stream's durable journal: an append-only file in the data folder that keeps every stream
 * record until the stream handler has succeeded on it, so a crash (kill -9) loses none (DynamoDB Streams
 * keeps records for 24 hours; this keeps them until they are handled).
 *
 * One JSON line per entry:
 *   {"r": record}   a record, written (and fsync'd) before its write reaches dynalite: write-ahead;
 *   {"c": [seq]}    the writes of these records landed (written before the next fsync, after the write);
 *   {"d": [seq]}    the handler succeeded on these records (or they went to the dead-letter file).
 *
 * A record without its `c` is one whose write may not have landed (the process died in between, or the
 * write failed): on recovery it is delivered only if the item is now as the record says. Writes go
 * through one queue: entries waiting while a flush runs are written, and fsync'd, together (group
 * commit), so concurrent writes share one fsync. When the file passes COMPACT_BYTES it is rewritten with
 * the records still pending (to a temporary file, fsync'd, then renamed over the journal).
 */
import { open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DynamoDBRecord } from 'aws-lambda';

export const JOURNAL_FILE = 'stream-journal.jsonl';
const COMPACT_BYTES = 4 * 1024 * 1024;

type Entry = { r: DynamoDBRecord } | { c: string[] } | { d: string[] };

interface Kept {
  record: DynamoDBRecord;
  committed: boolean;
}

/** A record found in the journal at start: pending delivery; `committed` false needs the item checked. */
export interface RecoveredRecord {
  record: DynamoDBRecord;
  committed: boolean;
}

export class StreamJournal {
  private queue: { line: string; sync: boolean; resolve: () => void; reject: (error: Error) => void }[] = [];
  private flushing = false;
  private size = 0;
  /** Records not yet done, in journal order (Map keeps insertion order). */
  private readonly kept = new Map<string, Kept>();
  private closed = false;

  private constructor(
    readonly path: string,
    private handle: FileHandle,
  ) {}

  /** Opens (or creates) the journal of a data folder; returns it with the records still pending. */
  static async open(dataDir: string): Promise<{ journal: StreamJournal; pending: RecoveredRecord[] }> {
    const path = join(dataDir, JOURNAL_FILE);
    const pending = existsSync(path) ? parse(await readFile(path, 'utf8')) : [];
    // The recovered records are rewritten as the journal's first entries, so the file starts small.
    const journal = new StreamJournal(path, await rewrite(path, pending));
    for (const { record, committed } of pending)
      journal.kept.set(record.dynamodb!.SequenceNumber!, { record, committed });
    return { journal, pending };
  }

  /** The highest sequence number the journal holds, so new records number on from it. */
  lastSequence(): bigint {
    let last = 0n;
    for (const sequence of this.kept.keys()) if (BigInt(sequence) > last) last = BigInt(sequence);
    return last;
  }

  /** Keeps a record durably: resolves once it is written and fsync'd, rejects when it could not be. */
  append(record: DynamoDBRecord): Promise<void> {
    this.kept.set(record.dynamodb!.SequenceNumber!, { record, committed: false });
    return this.enqueue({ r: record }, true);
  }

  /** The records' writes landed. */
  commit(sequences: readonly string[]): void {
    for (const sequence of sequences) {
      const kept = this.kept.get(sequence);
      if (kept) kept.committed = true;
    }
    void this.enqueue({ c: [...sequences] }, false).catch(() => undefined);
  }

  /**
   * The records are done with (handled, dead-lettered, or their write never landed). Not fsync'd: a
   * done mark lost to a crash only delivers the record again, which the stream function tolerates.
   */
  done(sequences: readonly string[]): void {
    if (sequences.length === 0) return;
    for (const sequence of sequences) this.kept.delete(sequence);
    void this.enqueue({ d: [...sequences] }, false).catch(() => undefined);
  }

  private enqueue(entry: Entry, sync: boolean): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the stream journal is closed'));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ line: `${JSON.stringify(entry)}\n`, sync, resolve, reject });
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          const text = batch.map((entry) => entry.line).join('');
          await this.handle.write(text);
          this.size += Buffer.byteLength(text);
          if (batch.some((entry) => entry.sync)) await this.handle.datasync();
          for (const entry of batch) entry.resolve();
        } catch (error) {
          for (const entry of batch) entry.reject(error as Error);
        }
        if (this.size > COMPACT_BYTES) await this.compact();
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Rewrites the journal with the records still pending (inside the flush loop: nothing interleaves). */
  private async compact(): Promise<void> {
    const pending = [...this.kept.values()];
    await this.handle.close();
    this.handle = await rewrite(this.path, pending);
    this.size = 0;
  }

  async close(): Promise<void> {
    while (this.flushing || this.queue.length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    this.closed = true;
    await this.handle.close();
  }
}

/** The records of a journal's text not yet done, in order; a torn last line (a crash mid-write) is skipped. */
function parse(text: string): RecoveredRecord[] {
  const records = new Map<string, RecoveredRecord>();
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    let entry: Entry;
    try {
      entry = JSON.parse(line) as Entry;
    } catch {
      continue;
    }
    if ('r' in entry) records.set(entry.r.dynamodb!.SequenceNumber!, { record: entry.r, committed: false });
    else if ('c' in entry) {
      for (const sequence of entry.c) {
        const found = records.get(sequence);
        if (found) found.committed = true;
      }
    } else if ('d' in entry) for (const sequence of entry.d) records.delete(sequence);
  }
  return [...records.values()];
}

/** Writes `pending` as a fresh journal (temporary file, fsync, rename) and opens it for appending. */
async function rewrite(path: string, pending: readonly (RecoveredRecord | Kept)[]): Promise<FileHandle> {
  const temporary = `${path}.tmp`;
  const file = await open(temporary, 'w');
  const lines = pending.map(({ record, committed }) => {
    const sequence = record.dynamodb!.SequenceNumber!;
    return `${JSON.stringify({ r: record })}\n${committed ? `${JSON.stringify({ c: [sequence] })}\n` : ''}`;
  });
  await file.write(lines.join(''));
  await file.datasync();
  await file.close();
  await rename(temporary, path);
  // The rename is durable once the folder is.
  const folder = await open(dirname(path), 'r');
  await folder.sync().catch(() => undefined);
  await folder.close();
  return open(path, 'a');
}
