/**
 * The EventBridge side of lib/domain/events.ts's `EventSink`: PutEvents in batches of at most 10 entries (the
 * API's limit), retrying only the entries EventBridge reports failed. Entries that still fail make the
 * publish throw, so the stream batch is retried; the events' deterministic ids let consumers drop the
 * duplicates that retry sends again.
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { AllotEvent, EventSink } from '../lib/domain/events.ts';

export const PUT_EVENTS_BATCH = 10;
const ATTEMPTS = 4;

export interface EventBridgeSinkOptions {
  busName: string;
  client?: EventBridgeClient;
  /** Waits between attempts; tests pass one that does not wait. */
  sleep?: (ms: number) => Promise<void>;
}

export function eventEntry(event: AllotEvent, busName: string): PutEventsRequestEntry {
  return {
    EventBusName: busName,
    Source: event.source,
    DetailType: event.detailType,
    Detail: JSON.stringify(event.detail),
    Time: new Date(event.detail.time),
  };
}

export class EventBridgeSink implements EventSink {
  private readonly client: EventBridgeClient;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: EventBridgeSinkOptions) {
    this.client = options.client ?? new EventBridgeClient({});
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async publish(events: readonly AllotEvent[]): Promise<void> {
    const entries = events.map((event) => eventEntry(event, this.options.busName));
    for (let start = 0; start < entries.length; start += PUT_EVENTS_BATCH) {
      await this.putBatch(entries.slice(start, start + PUT_EVENTS_BATCH));
    }
  }

  private async putBatch(batch: PutEventsRequestEntry[]): Promise<void> {
    let pending = batch;
    for (let attempt = 1; ; attempt++) {
      const { FailedEntryCount = 0, Entries = [] } = await this.client.send(
        new PutEventsCommand({ Entries: pending }),
      );
      if (FailedEntryCount === 0) return;
      // Result entries are in request order; a failed one carries an ErrorCode.
      const failed = pending.filter((_, index) => Entries[index]?.ErrorCode !== undefined);
      if (attempt >= ATTEMPTS) {
        const codes = [...new Set(Entries.map((entry) => entry.ErrorCode).filter(Boolean))].join(', ');
        throw new Error(
          `PutEvents: ${failed.length} entries still failed after ${attempt} attempts (${codes})`,
        );
      }
      pending = failed;
      await this.sleep(50 * 2 ** attempt);
    }
  }
}

/** Publishes nothing: the sink when no bus is configured. */
export const NO_EVENTS: EventSink = { publish: async () => undefined };

/** The deployed sink: the bus in EVENT_BUS_NAME, or none. Built on first use. */
export function sinkFromEnvironment(): EventSink {
  const busName = process.env.EVENT_BUS_NAME;
  return busName ? new EventBridgeSink({ busName }) : NO_EVENTS;
}
