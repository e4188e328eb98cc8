/**
 * Hand-built DynamoDB stream records (after Powertools' dynamodbRecordFactory): items in, marshalled
 * NEW_AND_OLD_IMAGES records out, with increasing sequence numbers.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

let sequence = 0;

type Item = Record<string, unknown> & { pk: string; sk: string };

function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', oldItem?: Item, newItem?: Item): DynamoDBRecord {
  const item = (newItem ?? oldItem)!;
  const number = String(++sequence).padStart(21, '0');
  const image = (value?: Item) =>
    value ? (marshall(value, { removeUndefinedValues: true }) as never) : undefined;
  return {
    eventID: `fixture-${number}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:000000000000:table/allot/stream/fixture',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: marshall({ pk: item.pk, sk: item.sk }) as never,
      ...(newItem ? { NewImage: image(newItem) } : {}),
      ...(oldItem ? { OldImage: image(oldItem) } : {}),
      SequenceNumber: number,
      SizeBytes: 100,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

export const insertRecord = (item: Item) => record('INSERT', undefined, item);
export const modifyRecord = (oldItem: Item, newItem: Item) => record('MODIFY', oldItem, newItem);
export const removeRecord = (oldItem: Item) => record('REMOVE', oldItem);

export function streamEvent(...records: DynamoDBRecord[]): DynamoDBStreamEvent {
  return { Records: records };
}
