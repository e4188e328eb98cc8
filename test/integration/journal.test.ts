/**
 * The local stream's durability (lib/local/stream/journal.ts, lib/local/store/dynalite.ts): a write whose record cannot
 * be kept fails and changes nothing; the journal gives back, after a reopen, exactly the records not done,
 * in order, each marked whether its write landed; a torn last line (a crash mid-append) is skipped; and a
 * server restarted on its folder delivers what was left before any new record.
 */
import { mkdtempSync, appendFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { JOURNAL_FILE, StreamJournal } from '../../lib/local/stream/journal.ts';
import { ensureTable, localClient, startLocalStore } from '../../lib/local/store/dynalite.ts';
import { startLocalAllot } from '../../lib/local/server.ts';
import { claim, client, eventually, indexPool } from '../helpers/allot.ts';

const folders: string[] = [];
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'allot-journal-'));
  folders.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

function record(sequence: number): DynamoDBRecord {
  const number = String(sequence).padStart(21, '0');
  return {
    eventID: `test-${number}`,
    eventName: 'INSERT',
    dynamodb: { SequenceNumber: number, Keys: { pk: { S: `k${sequence}` }, sk: { S: 's' } } },
  };
}

describe('the stream journal', () => {
  it('gives back the records not done, in order, with whether their write landed', async () => {
    const dir = folder();
    const { journal, pending } = await StreamJournal.open(dir);
    expect(pending).toEqual([]);
    for (let i = 1; i <= 5; i++) await journal.append(record(i));
    journal.commit([record(1).dynamodb!.SequenceNumber!, record(2).dynamodb!.SequenceNumber!]);
    journal.done([record(2).dynamodb!.SequenceNumber!, record(4).dynamodb!.SequenceNumber!]);
    await journal.close();
    // A crash in the middle of an append leaves half a line.
    appendFileSync(join(dir, JOURNAL_FILE), '{"r":{"eventID":"torn');
    const again = await StreamJournal.open(dir);
    expect(again.pending.map(({ record: r, committed }) => [r.eventID, committed])).toEqual([
      ['test-000000000000000000001', true],
      ['test-000000000000000000003', false],
      ['test-000000000000000000005', false],
    ]);
    expect(again.journal.lastSequence()).toBe(5n);
    await again.journal.close();
  });
});

describe('the write-ahead hook', () => {
  it('fails a write whose record could not be kept, and the write changes nothing', async () => {
    const store = await startLocalStore({ dataDir: ':memory:' });
    const sdk = localClient(store.endpoint);
    try {
      await ensureTable(sdk, 'wal');
      const put = (value: string) =>
        sdk.send(
          new PutItemCommand({
            TableName: 'wal',
            Item: { pk: { S: 'a' }, sk: { S: 'b' }, v: { S: value } },
          }),
        );
      await put('kept');
      let refused = 0;
      store.setWriteAhead(async () => {
        refused++;
        throw new Error('the disk is full');
      });
      await expect(put('lost')).rejects.toThrow();
      expect(refused).toBeGreaterThan(0);
      store.setWriteAhead(undefined);
      const { Item } = await sdk.send(
        new GetItemCommand({
          TableName: 'wal',
          Key: { pk: { S: 'a' }, sk: { S: 'b' } },
          ConsistentRead: true,
        }),
      );
      expect(Item?.v).toEqual({ S: 'kept' });
    } finally {
      sdk.destroy();
      await store.close();
    }
  });
});

describe('a server restarted on its folder', () => {
  it('delivers the records it had not handled before it stopped', async () => {
    const dir = folder();
    const first = await startLocalAllot({ dataDir: dir, port: 0, repairIntervalMs: 0 });
    const api = client(first.url);
    await api.post('indexpools', indexPool('p', ['1..10']));
    await first.stream!.drained();
    // The stream stops before the claim's records are handled, as a crash would stop it.
    await first.stream!.stop();
    expect((await api.post('claims', claim('c', { kind: 'IndexPool', name: 'p' }))).status).toBe(201);
    await first.close();
    const second = await startLocalAllot({ dataDir: dir, port: 0, repairIntervalMs: 0 });
    try {
      // The claim's allocation record, kept in the journal, reaches the counts after the restart.
      await eventually(async () => {
        expect((await client(second.url).get('indexpools/p')).body.status.allocated).toBe(1);
      });
    } finally {
      await second.close();
    }
  });
});
