/**
 * Local event sinks for lib/domain/events.ts: `npm start` appends each event to `<data dir>/events.jsonl` (one
 * EventBridge-shaped JSON object per line, so `tail -f` shows them); `:memory:` keeps them in an array
 * that tests read.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AllotEvent, EventSink } from '../domain/events.ts';

/** An event as EventBridge would deliver it to a rule's target (the fields consumers read). */
export interface DeliveredEvent {
  source: string;
  'detail-type': string;
  time: string;
  detail: AllotEvent['detail'];
}

export function delivered(event: AllotEvent): DeliveredEvent {
  return {
    source: event.source,
    'detail-type': event.detailType,
    time: event.detail.time,
    detail: event.detail,
  };
}

export class MemoryEventSink implements EventSink {
  readonly events: DeliveredEvent[] = [];
  async publish(events: readonly AllotEvent[]): Promise<void> {
    this.events.push(...events.map(delivered));
  }
}

export class FileEventSink implements EventSink {
  constructor(readonly path: string) {}
  async publish(events: readonly AllotEvent[]): Promise<void> {
    if (events.length === 0) return;
    await mkdir(dirname(this.path), { recursive: true });
    await appendFile(this.path, events.map((event) => `${JSON.stringify(delivered(event))}\n`).join(''));
  }
}
