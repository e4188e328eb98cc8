/**
 * `npm run bench [-- --store dynamodb-local]`: the whole benchmark on dynalite (bench/run.ts), or its
 * efficiency rows on DynamoDB Local (bench/dynamodb-local.ts); then the README's section from the results.
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { store: { type: 'string', default: 'dynalite' } } });
if (values.store === 'dynalite') await import('./run.ts');
else if (values.store === 'dynamodb-local') await import('./dynamodb-local.ts');
else throw new Error(`--store ${values.store}: dynalite or dynamodb-local`);
await import('./readme.ts');
