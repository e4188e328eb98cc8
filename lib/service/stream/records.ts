/**
 * A stream batch's records, as the stream function works on them: grouped by item key (a run), each run
 * cut into the item's lives. Plain functions of the records.
 *
 * A life is what one item was between its creation and its removal: it starts at the run's first record
 * or at an INSERT, and ends at a REMOVE or the run's end. A REMOVE followed by an INSERT of the same key
 * is two lives (a claim deleted and made again under its name is another claim, with another uid; an
 * allocation object deleted and put again is another object), and each is worked on: the REMOVE's work
 * depends on the old image (what the removed claim held, what the removed object named), the INSERT's
 * on the new one. Within a life only where it ended up matters, but for the transitions the record kinds
 * name themselves (lib/service/stream/kinds.ts).
 */
import type { ItemKey } from '../../domain/objects/records.ts';
import { itemKeyText } from '../../store/table.ts';

export interface ChangeRecord {
  /** The stream record's id (Lambda's eventID): the same record delivered again has the same id. */
  id: string;
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  keys: ItemKey;
  oldImage?: Record<string, unknown>;
  newImage?: Record<string, unknown>;
  /**
   * When the change was written (epoch ms), from the record's ApproximateCreationDateTime: whole
   * seconds, rounded down. Undefined when unknown.
   */
  at?: number;
}

/** One item's records in a batch, in stream order, each record once. */
export interface KeyRun {
  key: ItemKey;
  /** The key as one string (store/table.ts itemKeyText). */
  text: string;
  records: ChangeRecord[];
  lives: Life[];
}

export interface Life {
  records: ChangeRecord[];
  /** The item as the life's first record found it (a stub a claim was written over, or nothing). */
  before?: Record<string, unknown>;
  /** The item as it was when the life ended with a REMOVE. */
  removed?: Record<string, unknown>;
  /** The item as the life's last record left it; undefined when the life ended with a REMOVE. */
  after?: Record<string, unknown>;
}

/** What an image is (`t`: claim, alloc, pool, hold, stub…). */
export function typeOf(image: Record<string, unknown> | undefined): string | undefined {
  return (image as { t?: string } | undefined)?.t;
}

/** The life's item type: what it is, or what it was when removed. */
export function lifeType(life: Life): string | undefined {
  return typeOf(life.after ?? life.removed);
}

/** A life's last image, whether it still lives or was removed. */
export function lastImage(life: Life): Record<string, unknown> {
  return (life.after ?? life.removed)!;
}

/**
 * The batch's records by item key, in the order the keys first appear, each key's records in stream
 * order. A record that comes twice (the same id) counts once, where it came first: Lambda may deliver a
 * record again, but never a key's records out of order.
 */
export function runsOf(records: readonly ChangeRecord[]): KeyRun[] {
  const seen = new Set<string>();
  const runs = new Map<string, KeyRun>();
  for (const record of records) {
    if (seen.has(record.id)) continue;
    seen.add(record.id);
    const text = itemKeyText(record.keys);
    let run = runs.get(text);
    if (!run) {
      run = { key: { pk: record.keys.pk, sk: record.keys.sk }, text, records: [], lives: [] };
      runs.set(text, run);
    }
    run.records.push(record);
  }
  for (const run of runs.values()) run.lives = livesOf(run.records);
  return [...runs.values()];
}

/** A run's records cut into lives (see the top of the file). */
export function livesOf(records: readonly ChangeRecord[]): Life[] {
  const lives: Life[] = [];
  let current: Life | undefined;
  for (const record of records) {
    if (!current || record.eventName === 'INSERT') {
      current = { records: [], before: record.oldImage };
      lives.push(current);
    }
    current.records.push(record);
    if (record.eventName === 'REMOVE') {
      current.removed = record.oldImage;
      current.after = undefined;
      current = undefined;
    } else current.after = record.newImage;
  }
  // (An INSERT that follows a MODIFY starts a life too: the REMOVE between them was lost.)
  return lives;
}

/** The records of a life that moved a field from one value to another (compared as JSON). */
export function changed(life: Life, field: (image: Record<string, unknown> | undefined) => unknown) {
  return life.records.filter(
    (record) => JSON.stringify(field(record.oldImage)) !== JSON.stringify(field(record.newImage)),
  );
}
