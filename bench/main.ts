/**
 * `npm run bench [-- --store dynamodb-local]`: the whole benchmark on dynalite (bench/run.ts, then the
 * rows of prefix pools of a range of lengths, bench/prefix-lengths.ts, then the stream's rows,
 * bench/stream.ts, of selected lists and watch events, bench/watch.ts, a lease's whole life,
 * bench/leases.ts, a claim among quarantined values, bench/quarantine.ts, and a claim from a pool shared
 * with another namespace, with a quota, bench/sharing.ts, who held a value, bench/history.ts, and the
 * package's size, bench/package.ts), or its efficiency rows on DynamoDB Local (bench/dynamodb-local.ts);
 * then docs/benchmark.md's section from the results.
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { store: { type: 'string', default: 'dynalite' } } });
if (values.store === 'dynalite') {
  await import('./run.ts');
  await import('./prefix-lengths.ts');
  await import('./stream.ts');
  await import('./watch.ts');
  await import('./leases.ts');
  await import('./quarantine.ts');
  await import('./sharing.ts');
  await import('./history.ts');
  await import('./package.ts');
} else if (values.store === 'dynamodb-local') await import('./dynamodb-local.ts');
else throw new Error(`--store ${values.store}: dynalite or dynamodb-local`);
await import('./readme.ts');
