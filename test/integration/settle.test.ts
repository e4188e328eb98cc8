/**
 * The claim's settle (Table.settleClaim): the one write that says which allocation object a claim holds.
 * Its condition decides between two actors working on one claim (a handler and the stream function), so
 * each of its cases is pinned here against the store.
 */
import { describe, expect, it } from 'vitest';
import { allocatedOutcome, waitingOutcome } from '../../lib/service/allocation/decide.ts';
import type { AllocationRecord, ClaimRecord, ItemKey } from '../../lib/domain/objects/records.ts';

import { useTestAllot } from '../helpers/allot.ts';
import { allocatingClaim } from '../builders/records.ts';
import { ConditionFailedError } from '../../lib/store/client.ts';
import { objectKey } from '../../lib/store/keys.ts';

const { allot } = useTestAllot({ stream: false });

const now = () => new Date().toISOString();

async function storedClaim(name: string): Promise<{ key: ItemKey; claim: ClaimRecord }> {
  const key = objectKey('default', 'claims', name);
  const claim = allocatingClaim(name, 'p');
  await allot.table.createObject(key, claim);
  return { key, claim };
}

function holding(
  claim: ClaimRecord,
  value: number,
): { key: ItemKey; outcome: ReturnType<typeof allocatedOutcome> } {
  const key = { pk: `A#default#IndexPool#p#${value}`, sk: '~' };
  const allocation = {
    kind: 'Index',
    value: String(value),
    metadata: { name: `p-${value}` },
  } as unknown as AllocationRecord;
  return { key, outcome: allocatedOutcome(claim, allocation, key, now()) };
}

const settled = async (key: ItemKey) => (await allot.table.get<ClaimRecord>(key))!;

describe('settleClaim', () => {
  it('lands on the same claim holding nothing, and again with the key it holds', async () => {
    const { key, claim } = await storedClaim('settle-a');
    const { key: bound, outcome } = holding(claim, 7);
    await allot.table.settleClaim(key, claim.metadata.uid, outcome, claim);
    expect(await settled(key)).toMatchObject({ phase: 'Allocated', bound, rv: 2 });
    // A second actor settling the same outcome (the stream repairing after a lost answer) lands too.
    await allot.table.settleClaim(key, claim.metadata.uid, outcome, claim);
    expect(await settled(key)).toMatchObject({ phase: 'Allocated', bound, rv: 3 });
  });

  it('refuses a claim that holds another key', async () => {
    const { key, claim } = await storedClaim('settle-b');
    await allot.table.settleClaim(key, claim.metadata.uid, holding(claim, 7).outcome, claim);
    await expect(
      allot.table.settleClaim(key, claim.metadata.uid, holding(claim, 8).outcome, claim),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    // Nor may it be set waiting while it holds a key: an unbind does that, naming the key it drops.
    await expect(
      allot.table.settleClaim(key, claim.metadata.uid, waitingOutcome('PoolExhausted', 'none', now()), claim),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    expect(await settled(key)).toMatchObject({ bound: holding(claim, 7).key, rv: 2 });
  });

  it('refuses a claim recreated under the name (another uid), and a claim that is gone', async () => {
    const { key, claim } = await storedClaim('settle-c');
    await expect(
      allot.table.settleClaim(key, 'uid-of-an-earlier-claim', holding(claim, 7).outcome, claim),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    expect((await settled(key)).phase).toBe('Allocating');
    await allot.table.deleteItem(key);
    await expect(
      allot.table.settleClaim(key, claim.metadata.uid, holding(claim, 7).outcome, claim),
    ).rejects.toBeInstanceOf(ConditionFailedError);
    expect(await allot.table.get(key)).toBeUndefined();
  });
});
