/**
 * ALLOT_STORE=endpoint (lib/local/stores.ts): the local server on a table that exists already, as a
 * developer would point it at a deployed stack's. Here the "existing" table is made beforehand on the
 * test tier's own store; the server must use it as it is, serve the contract, and consume no stream.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalAllot, type LocalAllot } from '../../lib/local/server.ts';
import type { AllotStore } from '../../lib/local/stores.ts';
import { objectKey } from '../../lib/store/keys.ts';
import { Table } from '../../lib/store/table.ts';
import { claim, client, indexPool, startTestStore } from '../helpers/allot.ts';

let host: AllotStore;
const tableName = `existing-${process.pid}`;

beforeAll(async () => {
  host = await startTestStore();
  await host.prepareTable(tableName);
});
afterAll(() => host.close());

function pointAt(table: string) {
  vi.stubEnv('ALLOT_DYNAMODB_ENDPOINT', host.endpoint);
  vi.stubEnv('AWS_REGION', 'local');
  vi.stubEnv('ALLOT_TABLE_NAME', table);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
}

describe('the endpoint store', () => {
  let allot: LocalAllot;
  afterAll(async () => {
    await allot?.close();
    vi.unstubAllEnvs();
  });

  it('serves the contract on the existing table and feeds no stream function', async () => {
    pointAt(tableName);
    allot = await startLocalAllot({ dataDir: ':memory:', port: 0, store: 'endpoint' });
    expect(allot.stream).toBeUndefined();
    expect(allot.table.tableName).toBe(tableName);
    const api = client(allot.url);
    expect((await api.post('indexpools', indexPool('there', ['1..3']))).status).toBe(201);
    const answer = await api.post('claims', claim('one', { kind: 'IndexPool', name: 'there' }));
    expect(answer.status).toBe(201);
    expect(answer.body.status.value).toBe('1');
    // Written to the table that was there, as another client of the same store sees it.
    const reader = host.client();
    const item = await new Table({ tableName, client: reader }).get(objectKey('default', 'claims', 'one'));
    reader.destroy();
    expect(item).toMatchObject({ t: 'claim', phase: 'Allocated' });
  });

  it('refuses a table that does not exist, naming it', async () => {
    pointAt('no-such-table');
    await expect(startLocalAllot({ dataDir: ':memory:', port: 0, store: 'endpoint' })).rejects.toThrow(
      /no table no-such-table/,
    );
  });

  it('names the stores there are when ALLOT_STORE names none of them', async () => {
    vi.stubEnv('ALLOT_STORE', 'mongodb');
    await expect(startLocalAllot({ dataDir: ':memory:', port: 0 })).rejects.toThrow(
      'ALLOT_STORE=mongodb is not one of dynalite, dynamodb-local, endpoint',
    );
  });

  it('says which variables it needs', async () => {
    vi.stubEnv('ALLOT_TABLE_NAME', '');
    await expect(startLocalAllot({ dataDir: ':memory:', port: 0, store: 'endpoint' })).rejects.toThrow(
      /ALLOT_TABLE_NAME and AWS_REGION/,
    );
  });
});
