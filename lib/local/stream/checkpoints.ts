/**
 * Where the stream consumer (lib/local/stream/consumer.ts) has got to, per shard: the sequence number of
 * the last record it is done with, and which shards it has read to their end. Kept in one JSON file in
 * the data folder, replaced whole by a rename, so a process killed at any moment (kill -9) leaves either
 * the old file or the new one, never half of one; `:memory:` keeps it in memory only.
 *
 * A checkpoint lags what was delivered by at most the batch in flight: a restart delivers that batch
 * again, which the stream function, built for at-least-once delivery, takes as a duplicate.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

interface ShardCheckpoint {
  /** The last record done with (delivered, filtered out, or sent to the on-failure list). */
  sequence?: string;
  /** Read to its end: its children may be read. */
  finished?: boolean;
}

interface CheckpointFile {
  streamArn: string;
  shards: Record<string, ShardCheckpoint>;
}

export class Checkpoints {
  private state: CheckpointFile;

  /** `path` undefined: in memory only. A file for another stream (the table was made anew) is ignored. */
  constructor(
    readonly streamArn: string,
    private readonly path?: string,
  ) {
    this.state = { streamArn, shards: {} };
    if (!path) return;
    try {
      const stored = JSON.parse(readFileSync(path, 'utf8')) as CheckpointFile;
      if (stored.streamArn === streamArn) this.state = stored;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  sequenceOf(shardId: string): string | undefined {
    return this.state.shards[shardId]?.sequence;
  }

  finished(): Set<string> {
    return new Set(
      Object.entries(this.state.shards)
        .filter(([, shard]) => shard.finished)
        .map(([id]) => id),
    );
  }

  advance(shardId: string, sequence: string): void {
    this.state.shards[shardId] = { ...this.state.shards[shardId], sequence };
    this.save();
  }

  finish(shardId: string): void {
    this.state.shards[shardId] = { ...this.state.shards[shardId], finished: true };
    this.save();
  }

  /** Forgets shards the stream no longer lists (trimmed after 24 hours). */
  keepOnly(shardIds: ReadonlySet<string>): void {
    const before = Object.keys(this.state.shards).length;
    this.state.shards = Object.fromEntries(
      Object.entries(this.state.shards).filter(([id]) => shardIds.has(id)),
    );
    if (Object.keys(this.state.shards).length !== before) this.save();
  }

  private save(): void {
    if (!this.path) return;
    mkdirSync(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.state));
    renameSync(temporary, this.path);
  }
}
