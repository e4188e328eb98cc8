/**
 * The repair sweep's schedule for `npm start` (the deployed stack runs it from EventBridge Scheduler):
 * once at start, again once everything made before the start is past the sweep's grace period, so what
 * a crash left behind is healed within a minute of the restart, then every `intervalMs`. One sweep at a
 * time; every registered namespace, one budgeted run each.
 */
import type { ClaimContext } from '../service/context.ts';
import { REPAIR_GRACE_MS, type SweepOptions } from '../service/repair/state.ts';
import { REPAIR_KINDS, sweepAll, totalFixed, type RepairReport } from '../service/repair/sweep.ts';

/** The local default: a third of a minute, so an orphan past its 30-second grace waits at most 20 s more. */
export const LOCAL_REPAIR_INTERVAL_MS = 20_000;

export interface RepairLoop {
  /** Runs a sweep now (after the one in progress, if any). */
  runNow(): Promise<RepairReport[]>;
  /** Every sweep so far, added up by kind of fix. */
  readonly fixed: Record<string, number>;
  /**
   * Stops the schedule and ends the sweep in progress at its next unit of work (a sweep cut short keeps
   * its cursor, as one out of budget does); prints nothing more. Resolves once that sweep has returned.
   */
  stop(): Promise<void>;
}

export function startRepairLoop(
  ctx: ClaimContext,
  intervalMs: number,
  log: (line: string) => void = (line) => console.error(line),
  options: Pick<SweepOptions, 'historySince'> = {},
): RepairLoop {
  const fixed: Record<string, number> = Object.fromEntries(REPAIR_KINDS.map((kind) => [kind, 0]));
  const stopping = new AbortController();
  const { signal } = stopping;
  let running: Promise<RepairReport[]> = Promise.resolve([]);
  const sweep = (): Promise<RepairReport[]> => {
    running = running.then(async () => {
      if (signal.aborted) return [];
      try {
        const reports = await sweepAll(ctx, { signal, ...options });
        const total = totalFixed(reports);
        const repaired = REPAIR_KINDS.filter((kind) => total[kind] > 0);
        for (const kind of repaired) fixed[kind] = (fixed[kind] ?? 0) + total[kind];
        // After a stop nothing is printed: the server has said it is stopping.
        if (repaired.length > 0 && !signal.aborted)
          log(`repair: ${repaired.map((kind) => `${kind} ${total[kind]}`).join(', ')}`);
        return reports;
      } catch (error) {
        // A sweep cut off by the store closing under it is no failure to report.
        if (!signal.aborted) log(`repair sweep failed: ${String(error)}`);
        return [];
      }
    });
    return running;
  };
  void sweep();
  // What a crash left a moment before the start (an object whose holding was never written) is young
  // at the first sweep: this one finds it past its grace, rather than up to an interval later.
  const pastGrace = setTimeout(() => void sweep(), REPAIR_GRACE_MS + 1_000);
  pastGrace.unref();
  const timer = setInterval(() => void sweep(), intervalMs);
  timer.unref();
  return {
    runNow: sweep,
    fixed,
    async stop() {
      stopping.abort();
      clearTimeout(pastGrace);
      clearInterval(timer);
      await running;
    },
  };
}
