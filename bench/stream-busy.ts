/**
 * The stream function as the sustained-load bench watches it (bench/stream.ts, bench/stream-thread-worker.ts):
 * records handled, in all and during the load; the time any batch was in flight (the union of the
 * lanes); and the batches' own time summed (each lane's).
 */
import { performance } from 'node:perf_hooks';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';

type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface BusyFigures {
  handled: number;
  handledDuringLoad: number;
  busyMs: number;
  busyDuringLoadMs: number;
  /** The batches' own durations during the load, summed (lanes overlapping counted each). */
  batchMsDuringLoad: number;
}

export function busyMeter(stream: StreamHandler) {
  const figures: BusyFigures = {
    handled: 0,
    handledDuringLoad: 0,
    busyMs: 0,
    busyDuringLoadMs: 0,
    batchMsDuringLoad: 0,
  };
  let loading = false;
  let inFlight = 0;
  let busySince = 0;
  let loadStartedAt = 0;
  const handler = async (event: DynamoDBStreamEvent) => {
    if (inFlight++ === 0) busySince = performance.now();
    const batchStart = performance.now();
    try {
      const response = await stream(event);
      const failed = new Set((response?.batchItemFailures ?? []).map((item) => item.itemIdentifier));
      const first = event.Records.findIndex((record) => failed.has(record.dynamodb!.SequenceNumber!));
      const done = first >= 0 ? first : event.Records.length;
      figures.handled += done;
      if (loading) {
        figures.handledDuringLoad += done;
        figures.batchMsDuringLoad += performance.now() - batchStart;
      }
      return response;
    } finally {
      if (--inFlight === 0) {
        const now = performance.now();
        figures.busyMs += now - busySince;
        if (loading) figures.busyDuringLoadMs += now - Math.max(busySince, loadStartedAt);
      }
    }
  };
  /** The load starts (its counts start from nothing) or ends (a batch in flight counts its time so far). */
  const load = (phase: 'start' | 'end') => {
    const now = performance.now();
    if (phase === 'start') {
      loading = true;
      loadStartedAt = now;
      figures.handledDuringLoad = figures.busyDuringLoadMs = figures.batchMsDuringLoad = 0;
    } else {
      loading = false;
      if (inFlight > 0) figures.busyDuringLoadMs += now - Math.max(busySince, loadStartedAt);
    }
  };
  return { handler, figures, load };
}
