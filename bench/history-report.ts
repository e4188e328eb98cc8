/** The history rows of docs/benchmark.md's generated section (bench/readme.ts), from bench/history-results.json. */
import { existsSync, readFileSync } from 'node:fs';

interface QueryCost {
  requests: number;
  units: number;
  items: number;
}
interface HistoryResults {
  holding: {
    lives: number;
    historyFunction: { requests: number; units: number };
    holdingsRequests: number;
    watchesRequests: number;
  };
  queries: {
    otherHoldings: number;
    value: QueryCost;
    at: QueryCost;
    within?: QueryCost;
    withinAt?: QueryCost;
  }[];
}

const file = new URL('./history-results.json', import.meta.url);

export function historySection(table: (header: string[], body: string[][]) => string): string[] {
  if (!existsSync(file)) return [];
  const results = JSON.parse(readFileSync(file, 'utf8')) as HistoryResults;
  const { holding, queries } = results;
  const flat = (pick: (q: (typeof queries)[number]) => QueryCost | undefined) =>
    queries.every(
      (q) => pick(q)?.requests === pick(queries[0]!)?.requests && pick(q)?.units === pick(queries[0]!)?.units,
    );
  const row = (label: string, pick: (q: (typeof queries)[number]) => QueryCost | undefined) => [
    label,
    ...queries.map((q) => `${pick(q)?.requests} / ${pick(q)?.units}`),
    flat(pick) ? '✓' : '✗',
  ];
  return [
    `Who held a value (bench/history.ts; docs/history.md): ${holding.lives} claims' lives by one client, the stream function and the history function on the local stream, the history function's requests per life split by the keys they name (the claim and release paths make none for it: it reads the stream apart); then one value's queries (and a range's around it, \`within=5..9\`) in a pool with no other holding and with ${queries.at(-1)!.otherHoldings.toLocaleString('en')} past holdings of other values:`,
    '',
    table(
      ['figure', 'requests', 'capacity units'],
      [
        [
          'history function, per claim life',
          String(holding.historyFunction.requests),
          String(holding.historyFunction.units),
        ],
        [
          'of which the holdings (their items, the objects an end reads)',
          String(holding.holdingsRequests),
          '',
        ],
        ['of which the watches', String(holding.watchesRequests), ''],
      ],
    ),
    '',
    table(
      [
        'query',
        ...queries.map((q) => `${q.otherHoldings.toLocaleString('en')} other holdings`),
        'target: flat',
      ],
      [
        row('`?value=`', (q) => q.value),
        row('`?value=&at=`', (q) => q.at),
        // Runs before ?within= have no such rows.
        ...(queries[0]!.within ? [row('`?within=`', (q) => q.within)] : []),
        ...(queries[0]!.withinAt ? [row('`?within=&at=`', (q) => q.withinAt)] : []),
      ],
    ),
    '',
  ];
}
