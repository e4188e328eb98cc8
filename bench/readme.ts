/**
 * Writes the generated section of docs/benchmark.md (between `<!-- bench:start` and `<!-- bench:end -->`)
 * from bench/results.json (and the stream's rows from bench/stream-results.json, bench/stream-report.ts), so
 * the figures there are the last run's: `npx tsx bench/readme.ts`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { historySection } from './history-report.ts';
import { packageSection } from './package-report.ts';
import { streamSection } from './stream-report.ts';

interface Figure {
  median: number;
  p99: number;
}
interface Scenario {
  name: string;
  clients: number;
  fill: number;
  pool: string;
  requestsPerClaim: Figure;
  roundTripsPerClaim?: Figure;
  capacityPerClaim: Figure;
  claimsPerSecond: number;
  duplicates: number;
  conditionalFailuresPerClaim: number;
  pattern: string;
  time: { inRequestsMs: number; outsideRequestsMs: number; requestMs: Record<string, number> };
}
interface Results {
  scenarios: Scenario[];
  exhaustedClaim: { requests: number };
  repeatedClaim: { requests: number; roundTrips?: number };
  newClaimByPut?: PathFigure;
  release?: PathFigure;
  rawConditionalPutsPerSecond: Record<string, number>;
  rawUnmeteredPutsPerSecond: Record<'allocation' | 'tiny', Record<string, number>>;
  efficiency: number;
  efficiencyOneClient: number;
  efficiencyOneClientScenario: string;
  raw: { clients: number; metered: boolean; msPerPut?: number }[];
  busiestKeyShare: number;
  perPoolCeilingClaimsPerSecond: number;
  bundles: { name: string; bytes: number; coldLoadMs: number }[];
}

interface PathFigure {
  requests: Figure;
  roundTrips: Figure;
  units: Figure;
  operations: string[];
}

const results = JSON.parse(readFileSync(new URL('./results.json', import.meta.url), 'utf8')) as Results;
const mark = (met: boolean) => (met ? '✓' : '✗');
const rows: string[][] = [];
const figuresOf = (s: Scenario) =>
  `${s.requestsPerClaim.median} / ${s.requestsPerClaim.p99} and ${s.capacityPerClaim.median} / ${s.capacityPerClaim.p99}`;
const emptySmall = results.scenarios.filter((s) => s.fill === 0 && s.pool === 'index-2^8');
// An empty larger pool's row is left out when it reads exactly like the empty 2^8 pool's; a note says so.
const likeEmptySmall = (s: Scenario) =>
  s.fill === 0 && s.pool !== 'index-2^8' && emptySmall.some((e) => figuresOf(e) === figuresOf(s));
const folded = results.scenarios.filter(likeEmptySmall);
for (const s of results.scenarios) {
  if (likeEmptySmall(s)) continue;
  const met =
    s.requestsPerClaim.median <= 5 &&
    s.capacityPerClaim.median <= 5 &&
    s.requestsPerClaim.p99 <= 10 &&
    s.capacityPerClaim.p99 <= 10 &&
    (s.roundTripsPerClaim?.median ?? Infinity) <= 3;
  rows.push([
    s.name.replace(/, 1 client$/, ''),
    `${s.requestsPerClaim.median} / ${s.requestsPerClaim.p99}`,
    s.roundTripsPerClaim ? `${s.roundTripsPerClaim.median} / ${s.roundTripsPerClaim.p99}` : '—',
    `${s.capacityPerClaim.median} / ${s.capacityPerClaim.p99}`,
    String(Math.round(s.claimsPerSecond)),
    s.clients > 1 ? `${s.duplicates} / ${s.conditionalFailuresPerClaim}` : '',
    mark(met),
  ]);
}
const concurrent = results.scenarios.find((s) => s.clients > 1)!;
const pathFigures = (f: PathFigure) =>
  `${f.requests.median} / ${f.requests.p99}; ${f.roundTrips.median} / ${f.roundTrips.p99}; ${f.units.median} / ${f.units.p99} (${f.operations.join(', ')})`;
const oneClient = results.scenarios.find((s) => s.name === results.efficiencyOneClientScenario)!;
const b = results.bundles;
const empty = results.scenarios.find((s) => s.pool === 'index-2^8' && s.fill === 0)!;
const worstRequests = Math.max(...results.scenarios.map((s) => s.requestsPerClaim.median));
const worstUnits = Math.max(...results.scenarios.map((s) => s.capacityPerClaim.median));
const requestsRatio = worstRequests / empty.requestsPerClaim.median;
const unitsRatio = worstUnits / empty.capacityPerClaim.median;
const figures: string[][] = [
  [
    "worst scenario's median ÷ the empty 2^8 pool's (requests, capacity units)",
    `${requestsRatio}, ${unitsRatio}`,
    `≤ 1.25 ${mark(Math.max(requestsRatio, unitsRatio) <= 1.25)}`,
  ],
  [
    'claim on an exhausted pool',
    `${results.exhaustedClaim.requests} requests`,
    `≤ 5 ${mark(results.exhaustedClaim.requests <= 5)}`,
  ],
  [
    'repeated claim (same name, already allocated)',
    `${results.repeatedClaim.requests} request${results.repeatedClaim.requests === 1 ? '' : 's'}`,
    `≤ 2 ${mark(results.repeatedClaim.requests <= 2)}`,
  ],
  ...(results.newClaimByPut
    ? [
        [
          'a new claim by PUT: requests, round trips, capacity units (median / p99)',
          pathFigures(results.newClaimByPut),
          `requests ≤ 5, round trips ≤ 3 ${mark(results.newClaimByPut.requests.median <= 5 && results.newClaimByPut.roundTrips.median <= 3)}`,
        ],
      ]
    : []),
  ...(results.release
    ? [
        [
          'a release (DELETE of a claim): requests, round trips, capacity units',
          pathFigures(results.release),
          '—',
        ],
      ]
    : []),
  [
    'duplicates, 32 concurrent instances',
    String(concurrent.duplicates),
    `0 ${mark(concurrent.duplicates === 0)}`,
  ],
  [
    'conditional-check failures per claim, 32 instances',
    String(concurrent.conditionalFailuresPerClaim),
    `≤ 0.5 ${mark(concurrent.conditionalFailuresPerClaim <= 0.5)}`,
  ],
  [
    "raw conditional puts/s of a claim's allocation object, 1 / 32 clients (taken around the scenarios compared, counted as claims are)",
    `${results.rawConditionalPutsPerSecond['1']} / ${results.rawConditionalPutsPerSecond['32']}`,
    '—',
  ],
  [
    'the same without the counting middleware; tiny items {pk, sk, t} (end of run)',
    `${results.rawUnmeteredPutsPerSecond.allocation['1']} / ${results.rawUnmeteredPutsPerSecond.allocation['32']}; ${results.rawUnmeteredPutsPerSecond.tiny['1']} / ${results.rawUnmeteredPutsPerSecond.tiny['32']}`,
    '—',
  ],
  [
    'efficiency (claims/s × item operations/claim ÷ raw puts/s; a BatchGetItem counts its keys), 32 instances',
    `${results.efficiency} (one client ${results.efficiencyOneClient})`,
    `≥ 0.7 ${mark(results.efficiency >= 0.7)}`,
  ],
  [
    `a claim's time, ${oneClient.name}: in its SDK calls + the handler's own; a raw put`,
    `${oneClient.time.inRequestsMs} + ${oneClient.time.outsideRequestsMs} ms (${Object.entries(
      oneClient.time.requestMs,
    )
      .map(([operation, ms]) => `${operation} ${ms}`)
      .join(', ')}); ${results.raw.find((raw) => raw.clients === 1 && raw.metered)?.msPerPut} ms`,
    '—',
  ],
  [
    "busiest partition key's share of writes in any 1-s window",
    String(results.busiestKeyShare),
    `≤ 0.25 ${mark(results.busiestKeyShare <= 0.25)}`,
  ],
  [
    "per-pool ceiling: 1,000 ÷ share (the issue's formula) / ÷ share × writes per claim",
    `${Math.round(1000 / results.busiestKeyShare)} / ${results.perPoolCeilingClaimsPerSecond} claims/s`,
    `≥ 4,000 ${mark(1000 / results.busiestKeyShare >= 4000)}`,
  ],
  [
    'bundle size, ' + b.map((x) => x.name).join(' / '),
    b.map((x) => Math.round(x.bytes / 1000)).join(' / ') + ' KB',
    `≤ 500 KB ${mark(b.every((x) => x.bytes <= 500_000))}`,
  ],
  [
    'cold module load, median of 10',
    b.map((x) => x.coldLoadMs).join(' / ') + ' ms',
    `≤ 150 ms ${mark(b.every((x) => x.coldLoadMs <= 150))}`,
  ],
];

/** The efficiency rows on each store, from bench/results-dynamodb-local.json when a run wrote one. */
interface StoreResults {
  scenarios: Scenario[];
  rawConditionalPutsPerSecond: Record<string, number>;
  efficiency: number;
  efficiencyOneClient: number;
}
const dynamodbLocalFile = new URL('./results-dynamodb-local.json', import.meta.url);
const dynamodbLocal = existsSync(dynamodbLocalFile)
  ? (JSON.parse(readFileSync(dynamodbLocalFile, 'utf8')) as StoreResults)
  : undefined;
const storeRows = (store: string, of: StoreResults, one: Scenario, many: Scenario) =>
  [
    [one, of.rawConditionalPutsPerSecond['1']!, of.efficiencyOneClient],
    [many, of.rawConditionalPutsPerSecond['32']!, of.efficiency],
  ].map(([s, raw, efficiency]) => {
    const scenario = s as Scenario;
    return [
      store,
      scenario.name,
      `${scenario.requestsPerClaim.median} / ${scenario.requestsPerClaim.p99}`,
      `${scenario.capacityPerClaim.median} / ${scenario.capacityPerClaim.p99}`,
      String(Math.round(scenario.claimsPerSecond)),
      String(raw),
      String(efficiency),
    ];
  });
const byStore = dynamodbLocal
  ? [
      ...storeRows('dynalite', results, oneClient, concurrent),
      ...storeRows(
        'DynamoDB Local',
        dynamodbLocal,
        dynamodbLocal.scenarios.find((s) => s.clients === 1)!,
        dynamodbLocal.scenarios.find((s) => s.clients > 1)!,
      ),
    ]
  : [];

function table(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** The rows of prefix pools of a range of lengths, from bench/prefix-results.json (bench/prefix-lengths.ts). */
interface PrefixRow {
  scenario: string;
  claims: number;
  allocated: number;
  requests: Figure & { max: number };
  roundTrips?: Figure;
  units: Figure;
  conditionalFailuresPerClaim: number;
  overlaps: number;
}
const prefixFile = new URL('./prefix-results.json', import.meta.url);
const prefixRows = existsSync(prefixFile)
  ? (JSON.parse(readFileSync(prefixFile, 'utf8')) as { rows: PrefixRow[] }).rows.map((row) => [
      row.scenario.replace(/, 1 client$/, ''),
      `${row.requests.median} / ${row.requests.p99} (${row.requests.max})`,
      row.roundTrips ? `${row.roundTrips.median} / ${row.roundTrips.p99}` : '—',
      `${row.units.median} / ${row.units.p99}`,
      `${row.allocated} of ${row.claims}`,
      `${row.conditionalFailuresPerClaim} / ${row.overlaps}`,
      `median ≤ 7, p99 ≤ 14, 0 overlaps ${mark(row.requests.median <= 7 && row.requests.p99 <= 14 && row.overlaps === 0)}`,
    ])
  : [];

/** Issue 26's rows, from bench/watch-results.json (bench/watch.ts): a selected list, a watch event. */
interface WatchResults {
  selectedList: {
    claimsInNamespace: number;
    lists: {
      query: string;
      pages: number;
      items: number;
      requests: number;
      units: number;
      unitsPerClaimInNamespace: number;
      unitsForAMillion: number;
    }[];
  };
  watchEvent: {
    claims: number;
    runs: {
      shards: number;
      batches: number;
      events: number;
      history: { requestsPerEvent: number; unitsPerEvent: number };
      watch: { events: number; requests: number; unitsPerEvent: number };
    }[];
  };
}
const watchFile = new URL('./watch-results.json', import.meta.url);
const watchResults = existsSync(watchFile)
  ? (JSON.parse(readFileSync(watchFile, 'utf8')) as WatchResults)
  : undefined;
const watchSection = watchResults
  ? [
      `A selected list (bench/watch.ts): ${watchResults.selectedList.claimsInNamespace.toLocaleString('en')} claims in one namespace, 1 % labelled \`team=fabric\`, listed as kubectl lists (pages of 500, following \`continue\`); the last column scales the units per claim to a namespace of a million:`,
      '',
      table(
        [
          'list',
          'pages',
          'items',
          'requests',
          'capacity units',
          'units per claim in the namespace',
          'a million claims',
        ],
        watchResults.selectedList.lists.map((list) => [
          decodeURIComponent(list.query),
          String(list.pages),
          String(list.items),
          String(list.requests),
          String(list.units),
          String(list.unitsPerClaimInNamespace),
          list.unitsForAMillion.toLocaleString('en'),
        ]),
      ),
      '',
      `A watch event (bench/watch.ts): ${watchResults.watchEvent.claims} claims made through the API (3 events each: the claim's ADDED and MODIFIED, its Index's ADDED), their records delivered to the history function in batches of up to 100 per shard, shards side by side; then one watch from the list's resourceVersion reads the claims' events:`,
      '',
      table(
        [
          'shards',
          'batches',
          'events',
          'history: requests per event',
          'history: units per event',
          'watch: events read',
          'watch: requests',
          'watch: units per event',
        ],
        watchResults.watchEvent.runs.map((run) => [
          String(run.shards),
          String(run.batches),
          String(run.events),
          String(run.history.requestsPerEvent),
          String(run.history.unitsPerEvent),
          String(run.watch.events),
          String(run.watch.requests),
          String(run.watch.unitsPerEvent),
        ]),
      ),
      '',
    ]
  : [];

const quarantineFile = new URL('./quarantine-results.json', import.meta.url);
const quarantineResults = existsSync(quarantineFile)
  ? (JSON.parse(readFileSync(quarantineFile, 'utf8')) as {
      claims: number;
      pool: string;
      quarantined: number;
      objects: PathFigure;
      quarantines: PathFigure;
      same: boolean;
    })
  : undefined;
const quarantineSection = quarantineResults
  ? [
      `A claim in a pool with quarantined values (bench/quarantine.ts): ${quarantineResults.pool}, ${quarantineResults.claims} new claims (PUT) in each, every request counted; median / p99:`,
      '',
      table(
        ['the held half is', 'requests', 'round trips', 'capacity units', 'target'],
        [
          ['allocation objects', quarantineResults.objects, ''],
          [
            `quarantines (${quarantineResults.quarantined.toLocaleString('en')})`,
            quarantineResults.quarantines,
            `the same as by objects ${mark(quarantineResults.same)}`,
          ],
        ].map(([label, figure, target]) => {
          const f = figure as PathFigure;
          return [
            label as string,
            `${f.requests.median} / ${f.requests.p99}`,
            `${f.roundTrips.median} / ${f.roundTrips.p99}`,
            `${f.units.median} / ${f.units.p99}`,
            target as string,
          ];
        }),
      ),
      '',
    ]
  : [];

/** A claim from a pool shared with another namespace, with a quota: bench/sharing-results.json (bench/sharing.ts). */
interface SharingLife {
  claim: PathFigure;
  claimHandler: { requests: number };
  streamOnClaim: { requests: number };
  releaseHandler: { requests: number };
  streamOnRelease: { requests: number };
  total: { requests: number; units: number; quotaRequests: number; quotaUnits: number };
}
interface SharingResults {
  lifeClaims: number;
  lifeQuota: number;
  committedUnshared: { claim: PathFigure & { samples: number } };
  unshared: SharingLife;
  shared: SharingLife & {
    allocated: number;
    holders: {
      count: number;
      bytes: number;
      averageTokenBytes: number;
      takeUnits: Record<string, number>;
      unitsAtMostHolders: number;
      unitsAtMostHoldersLongNames: number;
    };
  };
  quotaShare: {
    holders: { requests: number; units: number; ofRequests: number; ofUnits: number };
    added: { requests: number; units: number; ofRequests: number; ofUnits: number };
  };
  race: {
    quota: number;
    heldBefore: number;
    clients: number;
    rounds: { gotValue: number; answeredQuotaExceeded: number; overQuota: number }[];
    all: PathFigure & { samples: number };
    gotValue: PathFigure & { samples: number };
    quotaExceeded: PathFigure & { samples: number };
    quotaRefusalsPerClaim: number;
    conditionalFailuresPerClaim: number;
    overQuota: number;
  };
  targets: { unsharedUnchanged: boolean };
}
const sharingFile = new URL('./sharing-results.json', import.meta.url);
const sharing = existsSync(sharingFile)
  ? (JSON.parse(readFileSync(sharingFile, 'utf8')) as SharingResults)
  : undefined;
const medianTarget = (f: PathFigure) => f.requests.median <= 6 && f.roundTrips.median <= 4;
const sharingSection = sharing
  ? (() => {
      const race = sharing.race;
      const got = race.rounds.reduce((sum, r) => sum + r.gotValue, 0);
      const waited = race.rounds.reduce((sum, r) => sum + r.answeredQuotaExceeded, 0);
      const path = (label: string, f: PathFigure, outcome: string, target: string) => [
        label,
        `${f.requests.median} / ${f.requests.p99}`,
        `${f.roundTrips.median} / ${f.roundTrips.p99}`,
        `${f.units.median} / ${f.units.p99}`,
        outcome,
        target,
      ];
      const life = (label: string, l: SharingLife) => [
        label,
        String(l.claimHandler.requests),
        String(l.streamOnClaim.requests),
        String(l.releaseHandler.requests),
        String(l.streamOnRelease.requests),
        `${l.total.requests} / ${l.total.units}`,
        `${l.total.quotaRequests} / ${l.total.quotaUnits}`,
      ];
      const h = sharing.shared.holders;
      const q = sharing.quotaShare;
      return [
        `A claim from a pool shared with another namespace, with a quota (bench/sharing.ts): an IndexPool of 2^16 values in \`infra\` shared with \`acme\`, new claims (PUT) from \`acme\`, every request counted as above; one client, then ${race.clients} clients (each its own instance, warmed by a claim in the pool released before) racing at once for the last ${race.quota - race.heldBefore} places of \`maxAllocations: ${race.quota}\` with ${race.heldBefore} held, ${race.rounds.length} rounds; the claims over the quota are the pool's objects held by \`acme\` (its list) less the limit, after the answers and after the stream. Median / p99; targets: median ≤ 6 requests and ≤ 4 round trips, none over the quota, the unshared claim unchanged:`,
        '',
        table(
          [
            'claim',
            'requests',
            'round trips',
            'capacity units',
            'got a value / wait QuotaExceeded / over the quota',
            'target',
          ],
          [
            path(
              `unshared, bench/results.json (${sharing.committedUnshared.claim.samples} claims, index 2^8)`,
              sharing.committedUnshared.claim,
              '',
              '',
            ),
            path(
              `unshared, this run (${sharing.lifeClaims} claims, acme's own pool)`,
              sharing.unshared.claim,
              '',
              `unchanged ${mark(sharing.targets.unsharedUnchanged)}`,
            ),
            path(
              `shared, quota ${sharing.lifeQuota.toLocaleString('en')}, one client (${sharing.lifeClaims} claims)`,
              sharing.shared.claim,
              `${sharing.shared.allocated} / ${sharing.lifeClaims - sharing.shared.allocated} / 0`,
              `≤ 6, ≤ 4 ${mark(medianTarget(sharing.shared.claim))}`,
            ),
            path(
              `shared, ${race.clients} clients racing (${race.all.samples} claims)`,
              race.all,
              `${got} / ${waited} / ${race.overQuota}`,
              `≤ 6, ≤ 4, 0 over ${mark(medianTarget(race.all) && race.overQuota === 0)}`,
            ),
            path(`… of which got a value (${race.gotValue.samples})`, race.gotValue, '', ''),
            path(`… of which wait QuotaExceeded (${race.quotaExceeded.samples})`, race.quotaExceeded, '', ''),
          ],
        ),
        '',
        `A claim's whole life with a quota (as bench/stream.ts measures it: ${sharing.lifeClaims} claims by one client, the stream's work on their records, ${sharing.lifeClaims} releases, the stream's work on theirs; requests per claim, each function on its own client; the last column, the requests and units on the quota's holders item):`,
        '',
        table(
          [
            'pool',
            'claim handler',
            'stream, on the claim',
            'release handler',
            'stream, on the release',
            'whole life (requests / units)',
            "on the quota's item",
          ],
          [
            life("unshared (acme's own)", sharing.unshared),
            life('shared with acme, a quota', sharing.shared),
          ],
        ),
        '',
        table(
          ['figure', 'measured', 'target'],
          [
            [
              "the quota's share of a claim's whole life: on its holders item; the shared life less the unshared (requests, units)",
              `${q.holders.requests} of ${sharing.shared.total.requests} (${q.holders.ofRequests}), ${q.holders.units} of ${sharing.shared.total.units} (${q.holders.ofUnits}); +${q.added.requests} (${q.added.ofRequests}), +${q.added.units} (${q.added.ofUnits})`,
              '—',
            ],
            [
              'failed conditional writes per racing claim (of them, places refused by the quota)',
              `${race.conditionalFailuresPerClaim} (${race.quotaRefusalsPerClaim})`,
              '—',
            ],
            [
              "units of the quota's write with " +
                Object.keys(h.takeUnits)
                  .map((i) => String(Number(i)))
                  .join(' / ') +
                ' values held',
              Object.values(h.takeUnits).join(' / '),
              '—',
            ],
            [
              `the holders item at ${h.count} (tokens of ${h.averageTokenBytes} characters); at 4,000, so named / with 63-character claim names`,
              `${h.bytes.toLocaleString('en')} bytes; about ${h.unitsAtMostHolders} / ${h.unitsAtMostHoldersLongNames} units a write`,
              '—',
            ],
          ],
        ),
        '',
      ];
    })()
  : [];

const section = [
  '<!-- bench:start (generated from bench/results.json by bench/readme.ts) -->',
  '',
  table(
    [
      'scenario',
      'requests',
      'round trips',
      'capacity units',
      'claims/s',
      'duplicates / cond. failures per claim',
      'target',
    ],
    rows,
  ),
  '',
  ...(folded.length > 0
    ? [
        `(Left out, as they read like the empty 2^8 pool's rows: ${folded.map((s) => s.name.replace(/, 1 client$/, '')).join('; ')}.)`,
        '',
      ]
    : []),
  table(['figure', 'measured', 'target'], figures),
  '',
  ...(prefixRows.length > 0
    ? [
        'Prefix pools of a range of lengths (a /8 of /16../28; bench/prefix-lengths.ts, every request of a claim counted as above):',
        '',
        table(
          [
            'scenario',
            'requests median / p99 (max)',
            'round trips',
            'capacity units',
            'allocated',
            'failed cond. writes per claim / overlaps',
            'target',
          ],
          prefixRows,
        ),
        '',
      ]
    : []),
  ...(byStore.length > 0
    ? [
        "The efficiency rows on both stores (`npm run bench -- --store dynamodb-local` for DynamoDB Local), each with its own store's raw conditional puts:",
        '',
        table(
          ['store', 'scenario', 'requests', 'capacity units', 'claims/s', 'raw puts/s', 'efficiency'],
          byStore,
        ),
        '',
      ]
    : []),
  ...streamSection(table),
  ...watchSection,
  ...quarantineSection,
  ...sharingSection,
  ...historySection(table),
  ...packageSection(table),
  '<!-- bench:end -->',
].join('\n');

const pageUrl = new URL('../docs/benchmark.md', import.meta.url);
const page = readFileSync(pageUrl, 'utf8');
const start = page.indexOf('<!-- bench:start');
const end = page.indexOf('<!-- bench:end -->') + '<!-- bench:end -->'.length;
if (start < 0 || end < start) throw new Error('docs/benchmark.md has no bench section');
writeFileSync(pageUrl, page.slice(0, start) + section + page.slice(end));
console.log('docs/benchmark.md: benchmark section written from bench/results.json');
