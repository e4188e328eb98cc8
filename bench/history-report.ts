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
    seedSeconds?: number;
    value: QueryCost;
    at: QueryCost;
    within?: QueryCost;
    withinAt?: QueryCost;
  }[];
  watchLag?: {
    claims: number;
    fromAnswer: LagFigure;
    firstLineFromRequest: LagFigure;
    write: LagFigure;
  };
}
interface LagFigure {
  median: number;
  p99: number;
}

const file = new URL('./history-results.json', import.meta.url);
const round2 = (value: number) => Math.round(value * 100) / 100;

export function historySection(table: (header: string[], body: string[][]) => string): string[] {
  if (!existsSync(file)) return [];
  const results = JSON.parse(readFileSync(file, 'utf8')) as HistoryResults;
  const { holding, queries } = results;
  // The biggest pool's figures over the smallest non-empty one's (an empty pool has no next key for a
  // store to read past a query's run): 1 / 1 is flat.
  const least = queries.length > 2 ? queries[1]! : queries[0]!;
  const flat = (pick: (q: (typeof queries)[number]) => QueryCost) =>
    pick(queries.at(-1)!).requests === pick(least).requests &&
    pick(queries.at(-1)!).units === pick(least).units;
  const ratio = (pick: (q: (typeof queries)[number]) => QueryCost) => {
    const [some, most] = [pick(least), pick(queries.at(-1)!)];
    return `${round2(most.requests / some.requests)} / ${round2(most.units / some.units)}`;
  };
  const row = (label: string, pick: (q: (typeof queries)[number]) => QueryCost) => [
    label,
    ...queries.map((q) => `${pick(q).requests} / ${pick(q).units}`),
    ratio(pick),
    flat(pick) ? '✓' : '✗',
  ];
  const biggest = queries.at(-1)!;
  const seeded =
    biggest.seedSeconds !== undefined
      ? ` (seeded through the store, BatchWriteItem, in ${biggest.seedSeconds} s: ${Math.round(biggest.otherHoldings / biggest.seedSeconds).toLocaleString('en')} holdings a second)`
      : '';
  const lag = results.watchLag;
  const counts = queries.map((q) => q.otherHoldings.toLocaleString('en'));
  const sizes = `${counts.slice(0, -1).join(', ')} and ${counts.at(-1)}`;
  return [
    `Who held a value (bench/history.ts; docs/history.md): ${holding.lives} claims' lives by one client, the stream function and the history function on the local stream, the history function's requests per life split by the keys they name (the claim and release paths make none for it: it reads the stream apart); then one value's queries (and a range's around it, \`within=5..9\`) in pools with ${sizes} past holdings of other values${seeded}, requests / read capacity units per query:`,
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
        `ratio ${biggest.otherHoldings.toLocaleString('en')} / ${least.otherHoldings.toLocaleString('en')}`,
        'target: flat',
      ],
      [
        row('`?value=`', (q) => q.value),
        row('`?value=&at=`', (q) => q.at),
        // Runs before ?within= have no such rows.
        ...(queries[0]!.within ? [row('`?within=`', (q) => q.within!)] : []),
        ...(queries[0]!.withinAt ? [row('`?within=&at=`', (q) => q.withinAt!)] : []),
      ],
    ),
    '',
    ...(lag
      ? [
          `A watch's lag behind a write on the local server (bench/history-lag.ts): \`npm start\`'s entry in a process of its own on a fresh data folder, a watch on claims from the list's resourceVersion, ${lag.claims} claims made one after another by one client:`,
          '',
          table(
            ['figure', 'median', 'p99'],
            [
              [
                "the watch's line with the claim's value, after the write's answer",
                `${lag.fromAnswer.median} ms`,
                `${lag.fromAnswer.p99} ms`,
              ],
              [
                "the claim's first line (ADDED), after the write was sent",
                `${lag.firstLineFromRequest.median} ms`,
                `${lag.firstLineFromRequest.p99} ms`,
              ],
              ['the write itself', `${lag.write.median} ms`, `${lag.write.p99} ms`],
            ],
          ),
          '',
        ]
      : []),
  ];
}
