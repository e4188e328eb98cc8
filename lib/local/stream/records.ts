/**
 * What the Streams API hands out, as Lambda hands it to the stream function; and the order in which a
 * stream's shards may be read. Plain functions of the data, for lib/local/stream/consumer.ts.
 */
import type {
  _Record as StreamRecord,
  AttributeValue as StreamAttributeValue,
  Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';

type Image = Record<string, StreamAttributeValue>;

/**
 * DynamoDB Local 3.x's GetRecords writes an empty map as `{}`, without its `M` tag (an empty list keeps its
 * `L`; awslabs/amazon-dynamodb-local-samples#37), which `unmarshall` rejects. A value with no tag at all can
 * only be that map, so it becomes `{ M: {} }` again, at any depth. DynamoDB itself never sends one.
 */
export function repairEmptyMaps(value: StreamAttributeValue): StreamAttributeValue {
  if (Object.keys(value).length === 0) return { M: {} };
  if (value.M) return { M: repairImage(value.M) };
  if (value.L) return { L: value.L.map(repairEmptyMaps) };
  return value;
}

function repairImage(image: Image): Image {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, repairEmptyMaps(value)]));
}

/**
 * A Streams API record as the event source mapping puts it in the function's event: the source ARN added,
 * the creation time in epoch seconds (the SDK parses it into a Date), the images repaired.
 */
export function lambdaRecordOf(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const change = record.dynamodb!;
  const created = change.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion,
    eventSource: record.eventSource,
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(created && { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) }),
      Keys: repairImage(change.Keys ?? {}) as never,
      ...(change.NewImage && { NewImage: repairImage(change.NewImage) as never }),
      ...(change.OldImage && { OldImage: repairImage(change.OldImage) as never }),
      SequenceNumber: change.SequenceNumber,
      SizeBytes: change.SizeBytes,
      StreamViewType: change.StreamViewType as never,
    },
  };
}

/**
 * The shards to read now: not finished, and whose parent is finished or gone (trimmed, or never listed), so
 * a key's records keep their order across a shard split. In shard-id order, which is creation order.
 */
export function readableShards(shards: readonly Shard[], finished: ReadonlySet<string>): Shard[] {
  const listed = new Set(shards.map((shard) => shard.ShardId!));
  return shards
    .filter((shard) => !finished.has(shard.ShardId!))
    .filter(
      (shard) =>
        !shard.ParentShardId || !listed.has(shard.ParentShardId) || finished.has(shard.ParentShardId),
    )
    .sort((a, b) => a.ShardId!.localeCompare(b.ShardId!));
}
