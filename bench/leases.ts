/**
 * A lease's whole life (issue 25; alone: `npx tsx bench/leases.ts`), in requests and capacity units per
 * claim, each function on its own counted client (bench/measure.ts): 200 lease claims (PUT, leaseSeconds
 * 60) by the claim function, the stream's work on their records; 200 renewals (POST …/renew); the clock
 * moved past their ends and the repair function's expiry run (every minute, deployed:
 * lib/service/leases/leases.ts); the stream's work on the removals (the Recycle reclaim, Claim Expired). The
 * clock is this process's: Date.now moved, as the tests move it. Writes bench/lease-results.json.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createStreamHandler } from '../functions/stream.ts';
import { localClient } from '../lib/local/store/dynalite.ts';
import { expireLeases } from '../lib/service/leases/leases.ts';
import { Table } from '../lib/store/table.ts';
import { claimBody, startInstance } from './instance.ts';
import { byOperation, Meter, round, totals, type RequestRecord } from './measure.ts';
import { ShardFeed } from './stream-feed.ts';
import { benchTable, startStoreThread } from './store.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const CLAIMS = 200;
const resultsFile = fileURLToPath(new URL('lease-results.json', import.meta.url));
const realNow = Date.now.bind(Date);
let offset = 0;
Date.now = () => realNow() + offset;

function share(records: readonly RequestRecord[]) {
  const sum = totals(records);
  return {
    requests: round(sum.requests / CLAIMS, 2),
    units: round(sum.units / CLAIMS, 2),
    operations: Object.fromEntries(
      Object.entries(byOperation(records)).map(([operation, { requests, units }]) => [
        operation,
        { requests: round(requests / CLAIMS, 2), units: round(units / CLAIMS, 2) },
      ]),
    ),
  };
}

const store = await startStoreThread({ changes: true });
const tableName = await benchTable(store, 'allot-bench-leases');
const feed = new ShardFeed(store, tableName, 1);
const admin = startInstance(store.endpoint, tableName, 'api');
const claimer = startInstance(store.endpoint, tableName, 'claim');
const streamClient = localClient(store.endpoint);
const streamMeter = new Meter().attach(streamClient);
const stream = createStreamHandler({ table: new Table({ tableName, client: streamClient }) });
const repairClient = localClient(store.endpoint);
const repairMeter = new Meter().attach(repairClient);
try {
  const pool = { kind: 'IndexPool', name: 'leases' };
  await admin.call('PUT', 'indexpools/leases', {
    metadata: { name: 'leases' },
    spec: { ranges: ['0..65535'] },
  });
  await feed.deliver(stream);
  const names = Array.from({ length: CLAIMS }, (_, i) => `lease-${i}`);

  let mark = claimer.meter.mark();
  let streamMark = streamMeter.mark();
  for (const name of names) {
    const body = claimBody(name, pool);
    const answer = await claimer.call('PUT', `claims/${name}`, {
      ...body,
      spec: { ...body.spec, leaseSeconds: 60 },
    });
    if (answer.status !== 201) throw new Error(`claim ${name}: ${JSON.stringify(answer.body)}`);
  }
  const claim = share(claimer.meter.since(mark));
  await feed.deliver(stream);
  const streamOnClaim = share(streamMeter.since(streamMark));

  offset += 30_000;
  mark = claimer.meter.mark();
  streamMark = streamMeter.mark();
  for (const name of names) {
    const answer = await claimer.call('POST', `claims/${name}/renew`);
    if (answer.status !== 200) throw new Error(`renew ${name}: ${JSON.stringify(answer.body)}`);
  }
  const renew = share(claimer.meter.since(mark));
  await feed.deliver(stream);
  const streamOnRenew = share(streamMeter.since(streamMark));

  offset += 120_000;
  const repairMark = repairMeter.mark();
  const expired = await expireLeases({ table: new Table({ tableName, client: repairClient }) });
  const expiry = share(repairMeter.since(repairMark));
  streamMark = streamMeter.mark();
  await feed.deliver(stream);
  const streamOnExpiry = share(streamMeter.since(streamMark));
  const status = (await admin.call('GET', 'indexpools/leases')).body.status;

  const parts = { claim, streamOnClaim, renew, streamOnRenew, expiry, streamOnExpiry };
  const sum = (field: 'requests' | 'units') =>
    round(
      Object.values(parts).reduce((total, part) => total + part[field], 0),
      2,
    );
  const result = {
    when: new Date(realNow()).toISOString(),
    machine: `${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
    claims: CLAIMS,
    expired,
    ...parts,
    total: { requests: sum('requests'), units: sum('units') },
    countsAfter: status,
    countsExact: status?.allocated === 0 && status?.free === status?.total,
  };
  writeFileSync(resultsFile, `${JSON.stringify(result, null, 2)}\n`);
  console.error(
    `a lease's whole life: ${result.total.requests} requests / ${result.total.units} units per claim ` +
      `(claim ${claim.requests}/${claim.units}, stream ${streamOnClaim.requests}/${streamOnClaim.units}, ` +
      `renew ${renew.requests}/${renew.units}, stream ${streamOnRenew.requests}/${streamOnRenew.units}, ` +
      `expiry ${expiry.requests}/${expiry.units}, stream ${streamOnExpiry.requests}/${streamOnExpiry.units}); ` +
      `${expired} expired; counts exact after: ${result.countsExact}`,
  );
} finally {
  feed.close();
  for (const client of [streamClient, repairClient]) client.destroy();
  admin.destroy();
  claimer.destroy();
  await store.close();
}
