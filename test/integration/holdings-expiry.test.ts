/**
 * Holdings past the history retention, on the local server (api.md, "The history of a value": the local
 * server the same as a deployment): an ended holding's three items carry the TTL attribute (its end plus
 * the retention), and the server's TTL emulation (lib/local/store/ttl.ts), on its own schedule, deletes
 * exactly those past it. Holdings are written by the history function's writer with a retention of a
 * week and records of the past: some reach it a few seconds after they are written, some are days
 * from it, some have not ended.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { HoldingChange } from '../../lib/domain/objects/holdings.ts';
import { recordHoldings } from '../../lib/service/history/holdings.ts';
import { holdingKeys, holdingStart } from '../../lib/store/keys.ts';
import { TTL_ATTRIBUTE } from '../../lib/store/schema.ts';
import type { ItemKey } from '../../lib/domain/objects/records.ts';
import { eventually, useTestAllot } from '../helpers/allot.ts';

// The TTL emulation looks every 100 ms here (5 s by default): the test waits on what it sees, not a time.
const { allot, api } = useTestAllot({ ttlIntervalMs: 100 });

const DAY = 86_400_000;
const RETENTION_DAYS = 7;
const pool = { namespace: 'default', kind: 'IndexPool' as const, name: 'aged' };

/** An allocation object's item of the pool, held for a claim, as the history function reads it. */
const object = (value: string, life: string) => ({
  t: 'alloc',
  kind: 'Index',
  metadata: { namespace: 'default', name: `aged-${value}`, uid: `u-${life}` },
  spec: { poolRef: { kind: 'IndexPool', name: 'aged' }, claimRef: { name: `c-${life}`, uid: `cu-${life}` } },
  value,
  origin: 'claim',
});

let sequence = 0;
/** A value held from `from` (ms ago) until `until` (ms ago; none: still held): its records and keys. */
function life(value: string, name: string, fromAgo: number, untilAgo?: number) {
  const now = Date.now();
  const change = (at: number, oldImage?: object, newImage?: object): HoldingChange => ({
    oldImage: oldImage as Record<string, unknown> | undefined,
    newImage: newImage as Record<string, unknown> | undefined,
    at,
    recordedAt: at,
    sequence: String(++sequence),
  });
  const item = object(value, name);
  const changes = [change(now - fromAgo, undefined, item)];
  const start = holdingStart(new Date(now - fromAgo).toISOString(), changes[0]!.sequence);
  if (untilAgo !== undefined) changes.push(change(now - untilAgo, item, undefined));
  const keys = holdingKeys(pool, value, { namespace: 'default', name: `c-${name}` }, start);
  return { value, name, changes, copies: [keys.byValue, keys.byPool, keys.byClaim!], open: keys.open };
}

const read = async (key: ItemKey) =>
  (
    await allot.table.doc.send(
      new GetCommand({ TableName: allot.table.tableName, Key: key, ConsistentRead: true }),
    )
  ).Item;

describe('holdings past the retention on the local server', () => {
  it('are deleted, every copy, by the TTL emulation; the rest stay, the open ones with their mark', async () => {
    // Ended a week less a few seconds ago: their TTL comes while the test watches.
    const soon = RETENTION_DAYS * DAY - 4_000;
    const expired = [
      life('1', 'old-a', 30 * DAY, soon),
      life('2', 'old-b', 30 * DAY, soon + 500),
      life('6', 'old-c', 40 * DAY, soon), // the value's older holding: the newer one stays
    ];
    const ended = [life('3', 'recent-a', 30 * DAY, 6 * DAY), life('4', 'recent-b', 30 * DAY, 3_600_000)];
    const open = [life('5', 'open-a', 30 * DAY), life('6', 'open-b', soon - 1)];
    await recordHoldings(
      allot.table,
      [...expired, ...ended, ...open].flatMap((l) => l.changes).sort((a, b) => a.at - b.at),
      { retentionDays: RETENTION_DAYS },
    );
    // What the writer left: every copy of an ended holding with its TTL (the end plus the retention),
    // an open holding with none, and its open mark.
    const ttlOf = async (key: ItemKey) => (await read(key))?.[TTL_ATTRIBUTE] as number | undefined;
    for (const held of expired)
      for (const key of held.copies) expect(await ttlOf(key)).toBeLessThanOrEqual(Date.now() / 1000 + 5);
    for (const held of ended)
      for (const key of held.copies) expect(await ttlOf(key)).toBeGreaterThan(Date.now() / 1000 + 3_000);
    for (const held of open) {
      expect(await read(held.open)).toBeDefined();
      for (const key of held.copies) {
        expect(await read(key)).toBeDefined();
        expect(await ttlOf(key)).toBeUndefined();
      }
    }

    // The server's own schedule deletes the expired ones' copies...
    await eventually(async () => {
      for (const held of expired)
        for (const key of held.copies) expect(await read(key), `${held.name} ${key.pk}`).toBeUndefined();
    });
    // ...and nothing else: a further pass finds nothing due, and every other copy is there.
    expect(await allot.ttl!.expireDue()).toBe(0);
    for (const held of [...ended, ...open]) {
      for (const key of held.copies) expect(await read(key), `${held.name} ${key.pk}`).toBeDefined();
    }
    for (const held of open) expect(await read(held.open)).toBeDefined();

    // As the API reads them: by value, by pool, by claim.
    const items = async (path: string) => {
      const answer = await api.get(path);
      expect(answer.status).toBe(200);
      return (answer.body.items as { claim: { name: string } }[]).map((h) => h.claim.name);
    };
    expect(await items('indexpools/aged/history?value=1')).toEqual([]);
    expect(await items('indexpools/aged/history?value=6')).toEqual(['c-open-b']);
    expect((await items('indexpools/aged/history')).sort()).toEqual(
      ['c-open-a', 'c-open-b', 'c-recent-a', 'c-recent-b'].sort(),
    );
    expect(await items('claims/c-old-a/history')).toEqual([]);
    expect(await items('claims/c-recent-a/history')).toEqual(['c-recent-a']);
  });
});
