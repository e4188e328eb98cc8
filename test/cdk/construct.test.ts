import { App, RemovalPolicy, Stack, type CfnElement } from 'aws-cdk-lib';
import { Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AllotService, type AllotFunctionName, type AllotServiceProps } from '../../lib/cloud/construct.ts';
import { ALL_ROUTES, KUBE_ROUTES } from '../../lib/http/routes.ts';
import { HISTORY_FILTER_PATTERNS, STREAM_FILTER_PATTERNS } from '../../lib/cloud/stream-filter.ts';
import { STREAM_MAPPING } from '../../lib/cloud/stream-mapping.ts';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { dynamoPermissions as permissionsOf } from '../helpers/permissions.ts';

const FUNCTION_NAMES: AllotFunctionName[] = [
  'api',
  'claim',
  'release',
  'stream',
  'repair',
  'claim-resource',
  'history',
];
const ITEM_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:Query',
];

/** Builds the service in its own app; bundling is skipped (bundles.test.ts bundles for real). */
function build(props?: AllotServiceProps) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  const service = new AllotService(stack, 'Allot', props);
  return { app, stack, service };
}

let stack: Stack;
let service: AllotService;
let template: Template;

beforeAll(() => {
  ({ stack, service } = build());
  template = Template.fromStack(stack);
});

/** The logical ID CloudFormation knows a construct by, read from the tree, never written down. */
function logicalId(construct: IConstruct): string {
  return stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

function resource(construct: IConstruct): { Properties: Record<string, unknown> } {
  return template.toJSON().Resources[logicalId(construct)];
}

describe('table', () => {
  it('is keyed by pk (hash) and sk (range), both strings', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ]),
    });
  });

  it('bills on demand', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', { BillingMode: 'PAY_PER_REQUEST' });
  });

  it('has point-in-time recovery and deletion protection', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      Replicas: [
        Match.objectLike({
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: true,
        }),
      ],
    });
  });

  it('is encrypted with a KMS key', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS' },
    });
  });

  it('streams new and old images', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
  });

  it('has the allocations (ALL), waiting and leases (KEYS_ONLY) indexes and no other', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      GlobalSecondaryIndexes: [
        {
          IndexName: 'allocations',
          KeySchema: [
            { AttributeName: 'gpk', KeyType: 'HASH' },
            { AttributeName: 'gsk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'waiting',
          KeySchema: [
            { AttributeName: 'wpk', KeyType: 'HASH' },
            { AttributeName: 'wsk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        {
          IndexName: 'leases',
          KeySchema: [
            { AttributeName: 'lpk', KeyType: 'HASH' },
            { AttributeName: 'lsk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    });
  });

  it('is retained when removed from the stack, by default', () => {
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('is destroyed with the stack when asked, without deletion protection', () => {
    const { stack } = build({ removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false });
    const destroyed = Template.fromStack(stack);
    destroyed.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({ Replicas: [Match.objectLike({ DeletionProtectionEnabled: false })] }),
    });
  });
});

describe('props', () => {
  it('rejects DESTROY while deletion protection is on', () => {
    expect(() => build({ removalPolicy: RemovalPolicy.DESTROY })).toThrow(/deletionProtection: false/);
  });

  it('rejects SNAPSHOT, which tables, queues and log groups do not support', () => {
    expect(() => build({ removalPolicy: RemovalPolicy.SNAPSHOT })).toThrow(/not supported/);
  });
});

describe('functions', () => {
  it.each(FUNCTION_NAMES)('%s runs index.handler on nodejs24.x, arm64, with active tracing', (name) => {
    expect(resource(service.functions[name]).Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Handler: 'index.handler',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
    });
  });

  it.each(FUNCTION_NAMES)('%s reads the table name from TABLE_NAME', (name) => {
    expect(resource(service.functions[name]).Properties).toMatchObject({
      Environment: {
        Variables: {
          TABLE_NAME: { Ref: logicalId(service.table) },
          POWERTOOLS_SERVICE_NAME: 'allot',
        },
      },
    });
  });

  it.each([
    ['api', 29],
    ['claim', 10],
    ['release', 10],
    ['stream', 60],
    ['repair', 120],
    ['history', 60],
  ] as const)('%s times out after %i s', (name, seconds) => {
    expect(resource(service.functions[name]).Properties).toMatchObject({ Timeout: seconds });
  });

  it.each(FUNCTION_NAMES)('%s logs to its own log group, kept for a month', (name) => {
    const logGroup = logicalId(service.functions[name].logGroup);
    expect(resource(service.functions[name]).Properties).toMatchObject({
      LoggingConfig: { LogGroup: { Ref: logGroup } },
    });
    expect(template.toJSON().Resources[logGroup]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
    });
  });
});

describe('HTTP API', () => {
  const routes = () => Object.values(template.findResources('AWS::ApiGatewayV2::Route'));

  /** The function a route's integration invokes, by name. */
  function functionOf(route: Record<string, unknown>): AllotFunctionName | undefined {
    const target = JSON.stringify((route.Properties as { Target: unknown }).Target);
    const integration = /"Ref":"([^"]+)"/.exec(target)?.[1];
    const uri = JSON.stringify(template.toJSON().Resources[integration!].Properties.IntegrationUri);
    return FUNCTION_NAMES.find((name) => uri.includes(`"${logicalId(service.functions[name])}"`));
  }

  it('has one route per entry of the route table (/v1 and Kubernetes), to its function, plus $default', () => {
    const actual = routes().map((route) => [route.Properties.RouteKey, functionOf(route)]);
    const expected = [
      ...ALL_ROUTES.map((route) => [`${route.method} ${route.path}`, route.function]),
      ['$default', 'api'],
    ];
    expect(actual.sort()).toEqual(expected.sort());
  });

  it('requires IAM authorization on every route, $default included', () => {
    const types = routes().map((route) => [route.Properties.RouteKey, route.Properties.AuthorizationType]);
    expect(types).toHaveLength(ALL_ROUTES.length + 1);
    expect(types.filter(([, type]) => type !== 'AWS_IAM')).toEqual([]);
  });

  it('serves the Kubernetes paths kubectl calls behind IAM: discovery, OpenAPI v3, and PATCH to its function', () => {
    const keys = new Map(
      routes().map((route) => [
        route.Properties.RouteKey,
        [route.Properties.AuthorizationType, functionOf(route)],
      ]),
    );
    const group = '/apis/pool.networking.metal.ironcore.dev/v1alpha1';
    expect(
      [
        'GET /api',
        'GET /apis',
        `GET ${group}`,
        'GET /openapi/v3',
        `GET /openapi/v3${group}`,
        `GET ${group}/namespaces/{namespace}/indexpools`,
        `PATCH ${group}/namespaces/{namespace}/indexpools/{name}`,
        `PATCH ${group}/namespaces/{namespace}/claims/{name}`,
        `DELETE ${group}/namespaces/{namespace}/claims/{name}`,
        `POST ${group}/namespaces/{namespace}/claims/{name}/renew`,
      ].map((key) => [key, keys.get(key)]),
    ).toEqual([
      ['GET /api', ['AWS_IAM', 'api']],
      ['GET /apis', ['AWS_IAM', 'api']],
      [`GET ${group}`, ['AWS_IAM', 'api']],
      ['GET /openapi/v3', ['AWS_IAM', 'api']],
      [`GET /openapi/v3${group}`, ['AWS_IAM', 'api']],
      [`GET ${group}/namespaces/{namespace}/indexpools`, ['AWS_IAM', 'api']],
      [`PATCH ${group}/namespaces/{namespace}/indexpools/{name}`, ['AWS_IAM', 'api']],
      [`PATCH ${group}/namespaces/{namespace}/claims/{name}`, ['AWS_IAM', 'claim']],
      [`DELETE ${group}/namespaces/{namespace}/claims/{name}`, ['AWS_IAM', 'release']],
      [`POST ${group}/namespaces/{namespace}/claims/{name}/renew`, ['AWS_IAM', 'claim']],
    ]);
    // Discovery and /version, seven routes per resource (PATCH and the list across every namespace
    // included), each pool's occupancy map, preview and history, and a claim's renewal and history.
    expect(KUBE_ROUTES.length).toBe(7 + 7 * 7 + 6 + 3 + 1 + 1);
  });

  it("lets API Gateway invoke each route's function, $default included", () => {
    // The source ARN API Gateway presents: `<api>/<stage>/<method>/<path>`, or `<api>/<stage>/$default`.
    const invocations: [AllotFunctionName, string][] = [
      ...ALL_ROUTES.map((route): [AllotFunctionName, string] => [
        route.function,
        `/$default/${route.method}${route.path}`,
      ]),
      ['api', '/$default/$default'],
    ];
    const api = logicalId(service.httpApi);
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).map(
      (permission) => permission.Properties,
    );
    const allowed = (name: AllotFunctionName, suffix: string) =>
      permissions.some((permission) => {
        const parts = permission.SourceArn['Fn::Join'][1] as unknown[];
        const pattern = parts.at(-1) as string;
        const glob = new RegExp(`^${pattern.replace(/[$.]/g, '\\$&').replaceAll('*', '.*')}$`);
        return (
          permission.Principal === 'apigateway.amazonaws.com' &&
          JSON.stringify(permission.FunctionName).includes(`"${logicalId(service.functions[name])}"`) &&
          JSON.stringify(parts.at(-2)) === JSON.stringify({ Ref: api }) &&
          glob.test(suffix)
        );
      });
    expect(invocations.filter(([name, suffix]) => !allowed(name, suffix))).toEqual([]);
  });

  it('logs access to a log group on the auto-deployed $default stage', () => {
    const logGroup = new Capture();
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: {
        DestinationArn: { 'Fn::GetAtt': [logGroup, 'Arn'] },
        Format: Match.stringLikeRegexp('\\$context\\.requestId'),
      },
    });
    expect(template.toJSON().Resources[logGroup.asString()]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
    });
  });
});

/** The event source mapping of one function: there are two, the stream function's and the history's. */
const mappingOf = (fn: lambda.IFunction) => {
  const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
  expect(mappings).toHaveLength(2);
  const mine = mappings.filter(
    (m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: logicalId(fn) }),
  );
  expect(mine).toHaveLength(1);
  return mine[0]!.Properties;
};

describe('stream', () => {
  const mapping = () => mappingOf(service.streamFunction);

  it('feeds the table stream to the stream function', () => {
    expect(mapping()).toMatchObject({
      FunctionName: { Ref: logicalId(service.streamFunction) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(service.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
    });
  });

  it('filters records with exactly the patterns of lib/cloud/stream-filter.ts', () => {
    const filters = mapping().FilterCriteria.Filters as { Pattern: string }[];
    expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual(STREAM_FILTER_PATTERNS);
  });

  it('bisects failing batches and retries a bounded number of times for at most a day', () => {
    expect(mapping()).toMatchObject({
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 5,
      MaximumRecordAgeInSeconds: 86400,
    });
  });

  it('reports per-record failures', () => {
    expect(mapping().FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('sends batches it gives up on to the dead-letter queue', () => {
    expect(mapping().DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(service.deadLetterQueue), 'Arn'] } },
    });
  });

  it('batches up to 100 records for up to a second, four batches per shard at a time', () => {
    expect(mapping()).toMatchObject({
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      ParallelizationFactor: STREAM_MAPPING.parallelizationFactor,
    });
  });

  it('keeps the dead-letter queue encrypted for 14 days and refuses plain HTTP', () => {
    expect(resource(service.deadLetterQueue).Properties).toEqual({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: logicalId(service.deadLetterQueue) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });
});

describe("history (the stream's second reader, for watches)", () => {
  const mapping = () => mappingOf(service.historyFunction);

  it('reads the same stream with the patterns of lib/cloud/stream-filter.ts', () => {
    expect(mapping()).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [logicalId(service.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      ParallelizationFactor: 1,
    });
    const filters = mapping().FilterCriteria.Filters as { Pattern: string }[];
    expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual(HISTORY_FILTER_PATTERNS);
  });

  it('retries a failing batch whole until it succeeds: no bisecting, no partial failures, no dead letters', () => {
    const properties = mapping();
    expect(properties.BisectBatchOnFunctionError).toBe(false);
    expect(properties.FunctionResponseTypes).toBeUndefined();
    expect(properties.DestinationConfig).toBeUndefined();
    expect(properties.MaximumRetryAttempts ?? -1).toBe(-1);
    expect(properties.MaximumBatchingWindowInSeconds ?? 0).toBe(0);
  });

  it('lets DynamoDB expire what carries the TTL attribute', () => {
    expect(resource(service.table).Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expiresAt',
      Enabled: true,
    });
  });
});

describe('permissions', () => {
  const dynamoPermissions = (name: AllotFunctionName) => permissionsOf(template, stack, service, name);

  const sorted = (actions: string[]) => [...actions].sort();
  const streamRead = sorted([
    'dynamodb:DescribeStream',
    'dynamodb:GetRecords',
    'dynamodb:GetShardIterator',
    'dynamodb:ListStreams',
  ]);

  it.each([
    // BatchGetItem: a pool's map reads its group summaries in batches; the overlap check of a prefix of a
    // pool of a range of lengths reads its ancestors (api for allocation objects, claim for claims).
    [
      'api',
      { table: sorted([...ITEM_ACTIONS, 'dynamodb:BatchGetItem']), 'index/allocations': ['dynamodb:Query'] },
    ],
    ['claim', { table: sorted([...ITEM_ACTIONS, 'dynamodb:BatchGetItem']) }],
    // Query: the pools carved from the claim (409 ClaimInUse).
    ['release', { table: sorted(['dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:Query']) }],
    [
      'stream',
      {
        // BatchGetItem: what a stream batch's work decides on, read once for the batch.
        table: sorted([...ITEM_ACTIONS, 'dynamodb:BatchGetItem']),
        'index/waiting': ['dynamodb:Query'],
        stream: streamRead,
      },
    ],
    [
      'repair',
      {
        // BatchGetItem: the open holdings' marks read against their copies.
        table: sorted([...ITEM_ACTIONS, 'dynamodb:BatchGetItem']),
        'index/allocations': ['dynamodb:Query'],
        'index/waiting': ['dynamodb:Query'],
        // The lease expiry's every minute (service/leases/leases.ts).
        'index/leases': ['dynamodb:Query'],
      },
    ],
  ] as const)('%s may do exactly what it needs on the table', (name, expected) => {
    expect(dynamoPermissions(name)).toEqual(expected);
  });

  it('grants no dynamodb wildcard and no Scan to anyone', () => {
    const actions = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) =>
      policy.Properties.PolicyDocument.Statement.flatMap((statement: { Action: string | string[] }) =>
        [statement.Action].flat(),
      ),
    );
    expect(actions.filter((action) => /^dynamodb:.*\*|^\*$|^dynamodb:Scan$/.test(action))).toEqual([]);
  });

  it('uses no AWS managed policies', () => {
    for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('cdk-nag', () => {
  it('finds nothing unacknowledged in the AwsSolutions pack', () => {
    const { app } = build();
    app.synth();
    expect(new AwsSolutionsChecks().validateScope(app).violations).toEqual([]);
  });

  it('does report findings, so the clean result above means something', () => {
    const app = new App();
    new sqs.Queue(new Stack(app, 'Plain'), 'Queue');
    const ruleNames = new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName);
    expect(ruleNames).toEqual(expect.arrayContaining(['AwsSolutions-SQS3', 'AwsSolutions-SQS4']));
  });
});
