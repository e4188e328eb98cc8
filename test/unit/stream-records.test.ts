/**
 * The pure half of the Streams API consumer (lib/local/stream/records.ts): the repair of DynamoDB Local's
 * untagged empty maps, the record as Lambda hands it over, and the order in which shards may be read.
 */
import { describe, expect, it } from 'vitest';
import type { _Record as StreamRecord, Shard } from '@aws-sdk/client-dynamodb-streams';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { lambdaRecordOf, readableShards, repairEmptyMaps } from '../../lib/local/stream/records.ts';

describe('repairEmptyMaps', () => {
  it.each([
    ['an untagged empty map', {}, { M: {} }],
    ['one inside a map', { M: { labels: {} } }, { M: { labels: { M: {} } } }],
    ['one inside a list', { L: [{}, { L: [] }, { S: 'x' }] }, { L: [{ M: {} }, { L: [] }, { S: 'x' }] }],
    ['a tagged empty map', { M: {} }, { M: {} }],
    ['an empty list (DynamoDB Local keeps its tag)', { L: [] }, { L: [] }],
    ['a string', { S: '' }, { S: '' }],
  ])('turns %s into what DynamoDB sends', (_name, value, repaired) => {
    expect(repairEmptyMaps(value as never)).toEqual(repaired);
  });
});

describe('lambdaRecordOf', () => {
  const streamArn = 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/2026-01-01T00:00:00.000';
  // A record as DynamoDB Local 3.x's GetRecords writes it (parsed by the SDK): `metadata.labels` untagged.
  const raw: StreamRecord = {
    eventID: 'e-1',
    eventName: 'MODIFY',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'ddblocal',
    dynamodb: {
      ApproximateCreationDateTime: new Date('2026-01-01T00:00:07.500Z'),
      Keys: { pk: { S: 'O#a' }, sk: { S: 'b' } },
      NewImage: {
        pk: { S: 'O#a' },
        sk: { S: 'b' },
        metadata: { M: { labels: {} as never } },
        list: { L: [] },
      },
      OldImage: { pk: { S: 'O#a' }, sk: { S: 'b' }, metadata: {} as never },
      SequenceNumber: '000000000000000000007',
      SizeBytes: 40,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };

  it('is what unmarshall reads, in the shape of a Lambda event record', () => {
    const record = lambdaRecordOf(raw, streamArn);
    expect(record.eventSourceARN).toBe(streamArn);
    expect(record.dynamodb?.ApproximateCreationDateTime).toBe(1767225607);
    expect(unmarshall(record.dynamodb!.NewImage as Record<string, AttributeValue>)).toEqual({
      pk: 'O#a',
      sk: 'b',
      metadata: { labels: {} },
      list: [],
    });
    expect(unmarshall(record.dynamodb!.OldImage as Record<string, AttributeValue>)).toEqual({
      pk: 'O#a',
      sk: 'b',
      metadata: {},
    });
  });
});

describe('readableShards', () => {
  const shard = (id: string, parent?: string): Shard => ({ ShardId: id, ParentShardId: parent });

  it.each([
    ['a lone shard', [shard('s1')], [], ['s1']],
    ['a child waits while its parent is unread', [shard('s1'), shard('s2', 's1')], [], ['s1']],
    ['a child once its parent is read to its end', [shard('s1'), shard('s2', 's1')], ['s1'], ['s2']],
    [
      'both children of a split parent',
      [shard('s1'), shard('s3', 's1'), shard('s2', 's1')],
      ['s1'],
      ['s2', 's3'],
    ],
    ['a child whose parent was trimmed', [shard('s2', 's1')], [], ['s2']],
    [
      'a grandchild waits for its parent, not only the root',
      [shard('s1'), shard('s2', 's1'), shard('s3', 's2')],
      ['s1'],
      ['s2'],
    ],
    ['nothing once every shard is read', [shard('s1')], ['s1'], []],
  ])('%s', (_name, shards, finished, readable) => {
    expect(readableShards(shards, new Set(finished)).map((s) => s.ShardId)).toEqual(readable);
  });
});
