/**
 * A claim in a pool with quarantined values (issue 25; alone: `npx tsx bench/quarantine.ts`): two IndexPools
 * of 2^16 values, half of each held at random, one by allocation objects (as claims leave them: bench/
 * fill.ts) and one by quarantines (values freed less than `quarantineSeconds` ago, as the stream function
 * leaves them: lib/service/leases/quarantine.ts), each pool's counts and summaries set by the stream function's
 * own refresh. Then 200 new claims (PUT) in each, every DynamoDB request of each claim counted
 * (bench/claim-path.ts). The claim path must cost the same in both: a quarantine looks held to the
 * search. Writes bench/quarantine-results.json.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as prettier from 'prettier';
import { leaseEnd } from '../lib/domain/objects/leases.ts';
import { timestamp } from '../lib/domain/objects/objects.ts';
import type { QuarantineRecord } from '../lib/domain/objects/records.ts';
import { refreshPool } from '../lib/service/stream/reconcile.ts';
import type { SlotChange } from '../lib/service/counts/tally.ts';
import { allocationKey, leaseAttributes } from '../lib/store/keys.ts';
import { pathFigure, putNewClaims, type PathFigure } from './claim-path.ts';
import { BenchPool, POOL_SHAPES, shuffled } from './fill.ts';
import { startInstance, type Instance } from './instance.ts';
import { benchTable, startStoreThread } from './store.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const CLAIMS = 200;
const FILL = 0.5;
const QUARANTINE_SECONDS = 3600;
const resultsFile = fileURLToPath(new URL('quarantine-results.json', import.meta.url));
const shape = POOL_SHAPES.find((candidate) => candidate.label === 'index-2^16')!;

/** Half the pool's values, at random, held back by quarantines; then the stream's refresh of them. */
async function quarantineHalf(admin: Instance, pool: BenchPool): Promise<number> {
  const ordinals = shuffled(Number(pool.total)).slice(0, Math.round(Number(pool.total) * FILL));
  const now = Date.now();
  const changes: SlotChange[] = [];
  const items = ordinals.map((ordinal) => {
    const value = pool.valueAt(BigInt(ordinal));
    const key = allocationKey(pool.id, pool.info.allocationKind, value);
    const quarantine: QuarantineRecord = {
      t: 'quarantine',
      kind: pool.info.allocationKind,
      metadata: { name: `fill-${ordinal}`, namespace: pool.id.namespace, uid: randomUUID() },
      poolRef: { kind: pool.id.kind, name: pool.id.name },
      value: value.value,
      since: timestamp(),
      until: leaseEnd(now, QUARANTINE_SECONDS),
    };
    const { slot, family } = value;
    changes.push({ record: randomUUID(), slot, family, present: true, hold: true, quarantined: true });
    return { ...key, ...quarantine, ...leaseAttributes(key, quarantine.until) };
  });
  for (let start = 0; start < items.length; start += 25) {
    let pending: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> | undefined = {
      [admin.table.tableName]: items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })),
    };
    while (pending && Object.keys(pending).length > 0) {
      const result = await admin.table.doc.send(new BatchWriteCommand({ RequestItems: pending }));
      pending = result.UnprocessedItems as typeof pending;
    }
  }
  for (let start = 0; start < changes.length; start += 1024)
    await refreshPool(admin.context, pool.id, changes.slice(start, start + 1024));
  return items.length;
}

const median = (figure: PathFigure) => ({
  requests: figure.requests.median,
  roundTrips: figure.roundTrips.median,
  units: figure.units.median,
});

const store = await startStoreThread();
const tableName = await benchTable(store, 'allot-bench-quarantine');
const admin = startInstance(store.endpoint, tableName, 'api');
const claimer = startInstance(store.endpoint, tableName, 'claim');
try {
  const held = new BenchPool(shape, 'random', 'objects-50');
  await held.create(admin);
  await held.fill(admin.table, FILL, 0n);
  await held.refresh(admin.context);
  const quarantining = new BenchPool(
    { ...shape, spec: { ...shape.spec, quarantineSeconds: QUARANTINE_SECONDS } },
    'random',
    'quarantined-50',
  );
  await quarantining.create(admin);
  const quarantined = await quarantineHalf(admin, quarantining);
  const status = (await admin.call('GET', 'indexpools/quarantined-50')).body.status;

  const names = (prefix: string) => Array.from({ length: CLAIMS }, (_, i) => `${prefix}-${i}`);
  const objects = pathFigure(await putNewClaims(claimer, held, names('o')));
  const quarantines = pathFigure(await putNewClaims(claimer, quarantining, names('q')));
  const result = {
    when: new Date().toISOString(),
    machine: `${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
    claims: CLAIMS,
    pool: `${shape.title}, ${FILL * 100} % held at random`,
    quarantined,
    statusAfterFill: status,
    objects,
    quarantines,
    same:
      JSON.stringify(median(objects)) === JSON.stringify(median(quarantines)) &&
      quarantines.statuses.every((code) => code === 201),
  };
  // Formatted as the repository's prettier formats JSON, so `npm run lint` stays clean after a run.
  const formatted = await prettier.format(JSON.stringify(result, null, 2), {
    ...(await prettier.resolveConfig(resultsFile)),
    parser: 'json',
  });
  writeFileSync(resultsFile, formatted);
  console.error(
    `a claim in ${result.pool}: by objects ${JSON.stringify(median(objects))}, by quarantines ` +
      `${JSON.stringify(median(quarantines))} (medians; ${quarantined} quarantined, status.quarantined ` +
      `${status?.quarantined}); the same: ${result.same}`,
  );
} finally {
  admin.destroy();
  claimer.destroy();
  await store.close();
}
