/**
 * The issue's targets, checked against the measured figures (never loosened), and the printed report.
 */
import type { BundleResult } from './bundles.ts';
import { BUNDLE_BUDGET_BYTES } from '../lib/cloud/functions.ts';
import type { SpaceConcentration } from './concentration.ts';
import { round } from './measure.ts';
import type { ScenarioResult } from './scenarios.ts';

export interface Check {
  target: string;
  comparison: '≤' | '≥' | '=';
  limit: number;
  measured: number | null;
  met: boolean;
  /** How far off a missed target is, in the measured unit and relative to the limit. */
  missedBy?: number;
  missedByPercent?: number;
  note?: string;
}

export function check(
  target: string,
  measured: number | null,
  comparison: Check['comparison'],
  limit: number,
): Check {
  if (measured === null || !Number.isFinite(measured))
    return { target, comparison, limit, measured: null, met: false };
  const met =
    comparison === '≤' ? measured <= limit : comparison === '≥' ? measured >= limit : measured === limit;
  const result: Check = { target, comparison, limit, measured: round(measured, 4), met };
  if (!met) {
    result.missedBy = round(Math.abs(measured - limit), 4);
    if (limit !== 0) result.missedByPercent = round((Math.abs(measured - limit) / limit) * 100, 1);
  }
  return result;
}

export function describeCheck(item: Check): string {
  const measured = item.measured === null ? 'n/a' : String(item.measured);
  const head =
    `${item.met ? '✓' : '✗'} ${item.target}: ${measured} (target ${item.comparison} ${item.limit})` +
    (item.note ? ` — ${item.note}` : '');
  if (item.met) return head;
  if (item.measured === null) return `${head} — not measured`;
  const percent = item.missedByPercent === undefined ? '' : `, ${item.missedByPercent}%`;
  return `${head} — missed by ${item.missedBy}${percent}`;
}

/** Scenario 1 and 2 targets of one scenario. */
export function scenarioChecks(scenario: ScenarioResult): Check[] {
  const checks = [
    check(`${scenario.name}: requests/claim median`, scenario.requestsPerClaim.median, '≤', 5),
    check(`${scenario.name}: requests/claim p99`, scenario.requestsPerClaim.p99, '≤', 10),
    check(`${scenario.name}: round trips/claim median`, scenario.roundTripsPerClaim.median, '≤', 3),
    check(`${scenario.name}: capacity/claim median`, scenario.capacityPerClaim.median, '≤', 5),
    check(`${scenario.name}: capacity/claim p99`, scenario.capacityPerClaim.p99, '≤', 10),
    check(`${scenario.name}: claims not allocated`, scenario.notAllocated, '=', 0),
  ];
  if (scenario.requestsOutsideWindow !== undefined)
    checks.push(
      check(
        `${scenario.name}: requests outside the materialised window`,
        scenario.requestsOutsideWindow,
        '=',
        0,
      ),
    );
  if (scenario.clients > 1) {
    checks.push(check(`${scenario.name}: duplicates`, scenario.duplicates, '=', 0));
    checks.push(
      check(`${scenario.name}: conditional failures/claim`, scenario.conditionalFailuresPerClaim, '≤', 0.5),
    );
  } else {
    checks.push(check(`${scenario.name}: duplicates`, scenario.duplicates, '=', 0));
  }
  return checks;
}

export interface Summary {
  scenarios: ScenarioResult[];
  exhausted: { requests: number };
  repeated: { requests: number };
  /** New claims by PUT (bench/claim-path.ts). */
  newByPut: { requests: { median: number }; roundTrips: { median: number } };
  efficiency: number;
  concentration: SpaceConcentration[];
  bundles: BundleResult[];
}

/** Every target of the issue, in its order. */
export function allChecks(summary: Summary): { perScenario: Map<string, Check[]>; overall: Check[] } {
  const perScenario = new Map<string, Check[]>();
  for (const scenario of summary.scenarios) perScenario.set(scenario.name, scenarioChecks(scenario));
  const overall: Check[] = [];
  const empty = summary.scenarios.find(
    (scenario) => scenario.pool === 'index-2^8' && scenario.fill === 0 && scenario.pattern === 'first',
  );
  const worstRequests = [...summary.scenarios].sort(
    (a, b) => b.requestsPerClaim.median - a.requestsPerClaim.median,
  )[0];
  const worstUnits = [...summary.scenarios].sort(
    (a, b) => b.capacityPerClaim.median - a.capacityPerClaim.median,
  )[0];
  if (empty && worstRequests && worstUnits) {
    overall.push(
      check(
        `worst requests/claim median (${worstRequests.name}) ÷ empty 2^8 pool's (${empty.requestsPerClaim.median})`,
        worstRequests.requestsPerClaim.median / empty.requestsPerClaim.median,
        '≤',
        1.25,
      ),
    );
    overall.push(
      check(
        `worst capacity/claim median (${worstUnits.name}) ÷ empty 2^8 pool's (${empty.capacityPerClaim.median})`,
        worstUnits.capacityPerClaim.median / empty.capacityPerClaim.median,
        '≤',
        1.25,
      ),
    );
  }
  overall.push(check('exhausted pool: requests of a new claim', summary.exhausted.requests, '≤', 5));
  overall.push(check('repeated claim: requests', summary.repeated.requests, '≤', 2));
  overall.push(check('new claim by PUT: requests median', summary.newByPut.requests.median, '≤', 5));
  overall.push(check('new claim by PUT: round trips median', summary.newByPut.roundTrips.median, '≤', 3));
  overall.push(check('efficiency (32 clients)', summary.efficiency, '≥', 0.7));
  for (const space of summary.concentration) {
    const target = `busiest key share, ${space.space} (max over 1-s windows)`;
    if (space.writes === 0) {
      overall.push({
        target,
        comparison: '≤',
        limit: 0.25,
        measured: null,
        met: true,
        note: 'no writes to this key space in the run, so no window can exceed it',
      });
      continue;
    }
    const item = check(target, space.busiestShare, '≤', 0.25);
    item.note = `${space.windows - space.windowsIgnored} of ${space.windows} windows had enough writes`;
    overall.push(item);
  }
  for (const bundle of summary.bundles) {
    overall.push(
      check(
        `bundle ${bundle.name}: KB (1 KB = 1000 bytes)`,
        bundle.bytes / 1000,
        '≤',
        BUNDLE_BUDGET_BYTES / 1000,
      ),
    );
    overall.push(check(`bundle ${bundle.name}: cold load median ms`, bundle.coldLoadMs, '≤', 150));
  }
  return { perScenario, overall };
}

// ---------------------------------------------------------------- printing

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

export function scenarioTable(
  scenarios: readonly ScenarioResult[],
  perScenario: Map<string, Check[]>,
): string {
  const header = [
    'scenario',
    'claims',
    'req med',
    'req p99',
    'rt med',
    'rt p99',
    'cap med',
    'cap p99',
    'claims/s',
    'dup',
    'cond/claim',
    'stream req/claim',
    'stream cap/claim',
    'targets',
  ];
  const rows = scenarios.map((scenario) => {
    const missed = (perScenario.get(scenario.name) ?? []).filter((item) => !item.met);
    const targets =
      missed.length === 0
        ? '✓'
        : `✗ ${missed
            .map(
              (item) =>
                `${item.target.slice(scenario.name.length + 2)} ${item.measured} (${item.comparison} ${item.limit}, off by ${item.missedBy})`,
            )
            .join('; ')}`;
    return [
      scenario.name,
      String(scenario.claims),
      String(scenario.requestsPerClaim.median),
      String(scenario.requestsPerClaim.p99),
      String(scenario.roundTripsPerClaim.median),
      String(scenario.roundTripsPerClaim.p99),
      String(scenario.capacityPerClaim.median),
      String(scenario.capacityPerClaim.p99),
      String(scenario.claimsPerSecond),
      String(scenario.duplicates),
      String(scenario.conditionalFailuresPerClaim),
      `${scenario.stream.requestsPerClaim}${scenario.stream.note ? '*' : ''}`,
      `${scenario.stream.capacityPerClaim}${scenario.stream.note ? '*' : ''}`,
      targets,
    ];
  });
  const widths = header.map((title, i) =>
    i === header.length - 1 ? 0 : Math.max(title.length, ...rows.map((row) => row[i]!.length)),
  );
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : pad(cell, widths[i]!, i > 0))).join('  ');
  const rule = widths.map((width, i) => '-'.repeat(i === widths.length - 1 ? 'targets'.length : width));
  return [line(header), rule.join('  '), ...rows.map(line)].join('\n');
}
