/**
 * The construct's production side: the event bus (events out, requests in), the alarms and the dashboard,
 * and the grants that go with them. Bundling is skipped (bundles.test.ts bundles once for real).
 */
import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AllotService, type AllotFunctionName, type AllotServiceProps } from '../../lib/cloud/construct.ts';

const FUNCTION_NAMES: AllotFunctionName[] = [
  'api',
  'claim',
  'release',
  'stream',
  'repair',
  'claim-resource',
  'history',
];

function build(props: (stack: Stack) => AllotServiceProps = () => ({})) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  const service = new AllotService(stack, 'Allot', props(stack));
  return { stack, service, template: Template.fromStack(stack) };
}

let stack: Stack;
let service: AllotService;
let template: Template;

beforeAll(() => {
  ({ stack, service, template } = build());
});

const idOf = (construct: IConstruct, inStack = stack) =>
  inStack.getLogicalId(construct.node.defaultChild as CfnElement);
const arnOf = (construct: IConstruct) => ({ 'Fn::GetAtt': [idOf(construct), 'Arn'] });

/** Every statement of every policy on a function's role. */
function statementsOf(name: AllotFunctionName): { Action: string | string[]; Resource: unknown }[] {
  const role = idOf(service.functions[name].role!);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${role}"`))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

describe('event bus', () => {
  it('is created when none is given', () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
  });

  it('is the one given, and no other is created', () => {
    const given = build((s) => ({ eventBus: events.EventBus.fromEventBusName(s, 'Shared', 'platform-bus') }));
    given.template.resourceCountIs('AWS::Events::EventBus', 0);
    given.template.hasResourceProperties('AWS::Events::Rule', { EventBusName: 'platform-bus' });
    given.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ EVENT_BUS_NAME: 'platform-bus' }) },
    });
  });

  it('is named to the stream function, which publishes the events', () => {
    const fn = template.toJSON().Resources[idOf(service.streamFunction)];
    expect(fn.Properties.Environment.Variables.EVENT_BUS_NAME).toEqual({ Ref: idOf(service.eventBus) });
  });

  it('takes events:PutEvents from the stream function, on this bus only', () => {
    const putEvents = statementsOf('stream').filter((s) => [s.Action].flat().includes('events:PutEvents'));
    expect(putEvents).toHaveLength(1);
    expect(putEvents[0]!.Resource).toEqual(arnOf(service.eventBus));
    for (const name of ['api', 'claim', 'release'] as const) {
      const actions = statementsOf(name).flatMap((s) => [s.Action].flat());
      expect(actions.filter((action) => action.startsWith('events:'))).toEqual([]);
    }
  });
});

describe('request rules', () => {
  it.each([
    ['Allot Claim Requested', 'claim'],
    ['Allot Release Requested', 'release'],
  ] as const)(
    'route %s from other sources to the %s function, with retries and a dead-letter queue',
    (type, name) => {
      template.hasResourceProperties('AWS::Events::Rule', {
        EventBusName: { Ref: idOf(service.eventBus) },
        EventPattern: { 'detail-type': [type], source: [{ 'anything-but': 'allot' }] },
        Targets: [
          Match.objectLike({
            Arn: arnOf(service.functions[name]),
            DeadLetterConfig: { Arn: arnOf(service.requestDeadLetterQueue) },
            RetryPolicy: { MaximumRetryAttempts: 4, MaximumEventAgeInSeconds: 7200 },
          }),
        ],
      });
    },
  );

  it.each(['claim', 'release'] as const)(
    'let EventBridge invoke the %s function from its rule only',
    (name) => {
      const rule = name === 'claim' ? service.claimRequestRule : service.releaseRequestRule;
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        FunctionName: arnOf(service.functions[name]),
        Principal: 'events.amazonaws.com',
        SourceArn: arnOf(rule),
      });
    },
  );

  it.each(['claim', 'release'] as const)(
    'leave the %s function 2 retries of a failed request, then its dead-letter queue',
    (name) => {
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: idOf(service.functions[name]) },
        MaximumRetryAttempts: 2,
        MaximumEventAgeInSeconds: 7200,
        DestinationConfig: { OnFailure: { Destination: arnOf(service.requestDeadLetterQueue) } },
      });
      const sends = statementsOf(name).filter((s) => [s.Action].flat().includes('sqs:SendMessage'));
      expect(sends.map((s) => s.Resource)).toEqual([arnOf(service.requestDeadLetterQueue)]);
    },
  );

  it('are the only rules but the repair and lease expiry schedules (Allot consumes none of its own events)', () => {
    template.resourceCountIs('AWS::Events::Rule', 4);
  });
});

describe('alarms', () => {
  const alarms = () => Object.values(template.findResources('AWS::CloudWatch::Alarm'));

  it('fire when either dead-letter queue holds a message', () => {
    for (const queue of [service.deadLetterQueue, service.requestDeadLetterQueue]) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [idOf(queue), 'QueueName'] } }],
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    }
  });

  it('fire when the stream function is more than a minute behind', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: idOf(service.streamFunction) } }],
      Statistic: 'Maximum',
      Threshold: 60_000,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('fire when the history function is more than a minute behind (watches get changes late)', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: idOf(service.historyFunction) } }],
      Threshold: 60_000,
    });
  });

  it.each(FUNCTION_NAMES.flatMap((name) => ['Errors', 'Throttles'].map((metric) => ({ name, metric }))))(
    'fire on any $metric of the $name function',
    ({ name, metric }) => {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: idOf(service.functions[name]) } }],
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    },
  );

  it('fire when any pool is above 90% utilisation (Metrics Insights over every pool), keeping state between reports', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: [
        Match.objectLike({
          Expression: 'SELECT MAX(PoolUtilisation) FROM SCHEMA("Allot", Namespace, Pool, PoolKind, service)',
          ReturnData: true,
        }),
      ],
      Threshold: 90,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'ignore',
    });
  });

  it('take another threshold for pool utilisation when asked', () => {
    const other = build(() => ({ poolUtilisationThreshold: 75 }));
    other.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: [Match.objectLike({ Expression: Match.stringLikeRegexp('PoolUtilisation') })],
      Threshold: 75,
    });
  });

  it('are exactly these twenty', () => {
    expect(alarms()).toHaveLength(20);
    expect(service.alarms).toHaveLength(20);
  });

  it('notify nobody without a topic, and the topic on ALARM and OK when given', () => {
    for (const alarm of alarms()) expect(alarm.Properties.AlarmActions).toBeUndefined();
    let topic!: Topic;
    const withTopic = build((s) => ({ alarmTopic: (topic = new Topic(s, 'OnCall')) }));
    const withTopicAlarms = Object.values(withTopic.template.findResources('AWS::CloudWatch::Alarm'));
    expect(withTopicAlarms).toHaveLength(20);
    const ref = { Ref: idOf(topic, withTopic.stack) };
    for (const alarm of withTopicAlarms) {
      expect(alarm.Properties.AlarmActions).toEqual([ref]);
      expect(alarm.Properties.OKActions).toEqual([ref]);
    }
  });
});

describe('dashboard', () => {
  it('shows the claim metrics, pool utilisation, the stream, function health and the alarms', () => {
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]!.Properties.DashboardBody);
    for (const text of [
      'ClaimsAllocated',
      'ClaimsPending',
      'ConditionalCheckFailures',
      'ClaimLatency',
      'PoolUtilisation',
      'IteratorAge',
      'ReclaimRecordAge',
      'SUM(Repairs)',
      'Throttles',
      'Errors',
    ]) {
      expect(body).toContain(text);
    }
    for (const alarm of service.alarms) expect(body).toContain(idOf(alarm));
  });
});
