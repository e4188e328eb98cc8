/**
 * The claim path beside the POST rows (issue 23): new claims made by PUT (the CLI's `allot claim`, direct
 * and EventBridge requests), and releases (DELETE of a claim, the release function's route), each through
 * the real handler with every request it sent counted, and its sequential round trips (measure.ts).
 */
import type { BenchPool } from './fill.ts';
import { claimBody, type Instance } from './instance.ts';
import { distribution, roundTrips, totals, type Distribution } from './measure.ts';

export interface PathSample {
  name: string;
  status: number;
  value?: string;
  requests: number;
  roundTrips: number;
  units: number;
  operations: string[];
}

export interface PathFigure {
  samples: number;
  requests: Distribution;
  roundTrips: Distribution;
  units: Distribution;
  statuses: number[];
  /** The operations of the first sample, in the order sent. */
  operations: string[];
}

/** One call's answer and every request it sent, counted (its round trips too). */
export async function measured(
  instance: Instance,
  name: string,
  send: () => Promise<{ status: number; body: any }>,
): Promise<PathSample> {
  const mark = instance.meter.mark();
  const answer = await send();
  const records = instance.meter.since(mark);
  const sum = totals(records);
  return {
    name,
    status: answer.status,
    value: answer.body?.status?.value as string | undefined,
    requests: sum.requests,
    roundTrips: roundTrips(records),
    units: sum.units,
    operations: records.map((record) => record.operation),
  };
}

/** New claims by PUT, one after another. */
export async function putNewClaims(instance: Instance, pool: BenchPool, names: readonly string[]) {
  const samples: PathSample[] = [];
  for (const name of names) {
    const sample = await measured(instance, name, () =>
      instance.call('PUT', `claims/${name}`, claimBody(name, pool.ref)),
    );
    if (sample.value !== undefined) pool.noteChange(sample.value, true);
    samples.push(sample);
  }
  return samples;
}

/** Releases: DELETE of each claim, one after another. */
export async function releaseClaims(instance: Instance, names: readonly string[]) {
  const samples: PathSample[] = [];
  for (const name of names)
    samples.push(await measured(instance, name, () => instance.call('DELETE', `claims/${name}`)));
  return samples;
}

export function pathFigure(samples: readonly PathSample[]): PathFigure {
  return {
    samples: samples.length,
    requests: distribution(samples.map((sample) => sample.requests)),
    roundTrips: distribution(samples.map((sample) => sample.roundTrips)),
    units: distribution(samples.map((sample) => sample.units)),
    statuses: [...new Set(samples.map((sample) => sample.status))],
    operations: samples[0]?.operations ?? [],
  };
}
