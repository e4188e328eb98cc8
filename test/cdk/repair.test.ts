/**
 * The repair sweep in the template: its function on a schedule (every 10 minutes unless `repairInterval`
 * says otherwise), its least-privilege grants, the `Repairs` alarm and its function's errors alarm, and
 * its route. Bundling is skipped (bundles.test.ts bundles once for real).
 */
import { App, Duration, Stack, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { AllotService, type AllotServiceProps } from '../../lib/cloud/construct.ts';

function build(props: AllotServiceProps = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  const service = new AllotService(stack, 'Allot', props);
  return { stack, service, template: Template.fromStack(stack) };
}

const idOf = (stack: Stack, construct: IConstruct) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

describe('the repair sweep in the stack', () => {
  const { stack, service, template } = build();
  const repairFunction = { 'Fn::GetAtt': [idOf(stack, service.functions.repair), 'Arn'] };

  it('runs the repair function every 10 minutes by default, with the sweep-everything payload', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(10 minutes)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: repairFunction, Input: JSON.stringify({ operation: 'repair' }) })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: repairFunction,
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [idOf(stack, service.repairSchedule), 'Arn'] },
    });
  });

  it("runs the function's lease expiry every minute, on a rule of its own", () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({ Arn: repairFunction, Input: JSON.stringify({ operation: 'expireLeases' }) }),
      ],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: repairFunction,
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [idOf(stack, service.leaseExpirySchedule), 'Arn'] },
    });
  });

  it('takes another interval, and refuses one that is not whole minutes', () => {
    build({ repairInterval: Duration.hours(1) }).template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 hour)',
    });
    expect(() => build({ repairInterval: Duration.seconds(90) })).toThrow(/whole number of minutes/);
  });

  it('lets the function read (one by one and in batches) and write items and query the three indexes, and nothing else of DynamoDB', () => {
    const role = idOf(stack, service.functions.repair.role!);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${role}"`))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
      .filter((statement) => JSON.stringify(statement.Action).includes('dynamodb:'));
    const table = idOf(stack, service.table);
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
          'dynamodb:Query',
          'dynamodb:BatchGetItem',
        ],
        Resource: { 'Fn::GetAtt': [table, 'Arn'] },
      },
      {
        Effect: 'Allow',
        Action: 'dynamodb:Query',
        Resource: ['allocations', 'waiting', 'leases'].map((index) => ({
          'Fn::Join': ['', [{ 'Fn::GetAtt': [table, 'Arn'] }, `/index/${index}`]],
        })),
      },
    ]);
  });

  it('alarms on any repair (Metrics Insights over every kind) and on the function failing', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: [
        Match.objectLike({
          Expression: 'SELECT SUM(Repairs) FROM SCHEMA("Allot", Kind, service)',
          ReturnData: true,
        }),
      ],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: idOf(stack, service.functions.repair) } }],
      Threshold: 0,
    });
  });

  it('serves the on-demand sweep through the repair function, with IAM authorization', () => {
    const route = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).find(
      (r) => r.Properties.RouteKey === 'POST /v1/namespaces/{namespace}/repair',
    );
    expect(route?.Properties.AuthorizationType).toBe('AWS_IAM');
  });
});
