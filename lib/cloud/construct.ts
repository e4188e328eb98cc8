/**
 * The deployed service: one DynamoDB table, four Lambda functions (three behind an HTTP API, one on the
 * table's stream), the stream's dead-letter queue, an EventBridge bus (events out, requests in), and the
 * alarms and dashboard that watch them. The only module that imports `aws-cdk-lib`; it reads the routes
 * and the stream filter from the same plain-data modules the local server uses, so the two cannot drift.
 */
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CLAIM_REQUESTED, EVENT_SOURCE, RELEASE_REQUESTED } from '../domain/events.ts';
import { ALL_ROUTES, API_FUNCTIONS, type ApiFunctionName } from '../http/routes.ts';
import { historyEventSourceProps, streamEventSourceProps } from './event-sources.ts';

import { TABLE_INDEXES, TABLE_PARTITION_KEY, TABLE_SORT_KEY, TTL_ATTRIBUTE } from '../store/schema.ts';

import {
  FUNCTION_NAMES,
  FUNCTION_SETTINGS,
  type AllotFunctionName,
  type FunctionSettings,
} from './functions.ts';
import { repairsMetric, scheduleRepairs } from './repair.ts';

export type { AllotFunctionName } from './functions.ts';

/** The SDK's default credential chain as the bundles have it (`--alias`, in createFunction). */
const LAMBDA_CREDENTIALS = fileURLToPath(new URL('../../functions/lambda-credentials.ts', import.meta.url));

export interface AllotServiceProps {
  /**
   * What CloudFormation does with the resources that hold data (the table, the dead-letter queue and the
   * log groups) when they leave the stack. `RETAIN`, `RETAIN_ON_UPDATE_OR_DELETE` or `DESTROY`; `DESTROY`
   * also needs `deletionProtection: false`.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * Whether the table refuses `DeleteTable`, whatever CloudFormation asks.
   *
   * @default true
   */
  readonly deletionProtection?: boolean;

  /**
   * How long the functions' logs and the API's access logs are kept.
   *
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * Who may call the HTTP API. Every route, `$default` included, uses it.
   *
   * @default IAM authorization (SigV4): `new HttpIamAuthorizer()`
   */
  readonly apiAuthorizer?: apigw.IHttpRouteAuthorizer;

  /**
   * The bus the stream function publishes domain events to (docs/events.md) and whose `Allot Claim
   * Requested` / `Allot Release Requested` events reach the claim and release functions.
   *
   * @default a new bus, owned by this construct
   */
  readonly eventBus?: events.IEventBus;

  /**
   * Where the alarms send ALARM and OK notifications.
   *
   * @default none: the alarms are in the console and on the dashboard only
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * The pool utilisation, in percent, above which the pool-utilisation alarm fires.
   *
   * @default 90
   */
  readonly poolUtilisationThreshold?: number;

  /**
   * How often the repair sweep runs over every namespace (lib/service/repair.ts); whole minutes.
   *
   * @default Duration.minutes(10)
   */
  readonly repairInterval?: Duration;
}

/** CloudWatch namespace of the functions' EMF metrics (functions/metrics.ts). */
export const METRICS_NAMESPACE = 'Allot';

export { historyEventSourceProps, streamEventSourceProps };

/** Rejects prop combinations CloudFormation would only fail on at deploy (or delete) time. */
function checkProps(props: AllotServiceProps): void {
  const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
  const allowed = [RemovalPolicy.RETAIN, RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE, RemovalPolicy.DESTROY];
  if (!allowed.includes(removalPolicy)) {
    throw new Error(
      `AllotService: removalPolicy ${removalPolicy} is not supported by DynamoDB tables, SQS queues or log ` +
        'groups; use RETAIN, RETAIN_ON_UPDATE_OR_DELETE or DESTROY',
    );
  }
  if (removalPolicy === RemovalPolicy.DESTROY && (props.deletionProtection ?? true)) {
    throw new Error(
      'AllotService: removalPolicy DESTROY cannot delete a table with deletion protection; ' +
        'set deletionProtection: false as well',
    );
  }
}

/**
 * Allot on Lambda and DynamoDB (api.md): the table, the HTTP API with IAM authorization on every route, the
 * functions behind it, and the stream function that reconciles what the API wrote.
 *
 * @example
 * const service = new AllotService(stack, 'Allot');
 * new CfnOutput(stack, 'ApiUrl', { value: service.url });
 */
export class AllotService extends Construct {
  /** The one table (key layout: lib/store/table.ts). */
  public readonly table: dynamodb.TableV2;
  /** The HTTP API: one route per entry of `ALL_ROUTES` (`/v1` and the Kubernetes paths), and `$default` to the api function. */
  public readonly httpApi: apigw.HttpApi;
  /** The API's `$default` stage, with access logging. */
  public readonly stage: apigw.HttpStage;
  /** The API's base URL (ends in `/`). */
  public readonly url: string;
  /** Every function, by name. */
  public readonly functions: Readonly<Record<AllotFunctionName, NodejsFunction>>;
  /** The function behind `$default` and every route that is not a claim write. */
  public readonly apiFunction: NodejsFunction;
  /** The function on the table's stream. */
  public readonly streamFunction: NodejsFunction;
  /** Where the stream's event source mapping reports batches it gave up on. */
  public readonly deadLetterQueue: sqs.Queue;
  /** The stream's second reader: the history watches read. */
  public readonly historyFunction: NodejsFunction;
  /** The bus events go out on and requests come in from. */
  public readonly eventBus: events.IEventBus;
  /** `Allot Claim Requested` → the claim function. */
  public readonly claimRequestRule: events.Rule;
  /** `Allot Release Requested` → the release function. */
  public readonly releaseRequestRule: events.Rule;
  /** Where EventBridge puts requests it could not deliver to a function. */
  public readonly requestDeadLetterQueue: sqs.Queue;
  /** Runs the repair function every `repairInterval`. */
  public readonly repairSchedule: events.Rule;
  /** Every alarm (dead-letter queues, iterator age, function errors and throttles, pool utilisation). */
  public readonly alarms: readonly cloudwatch.Alarm[];
  public readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: AllotServiceProps = {}) {
    super(scope, id);
    checkProps(props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;

    this.table = new dynamodb.TableV2(this, 'Table', {
      partitionKey: { name: TABLE_PARTITION_KEY, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE_SORT_KEY, type: dynamodb.AttributeType.STRING },
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.deletionProtection ?? true,
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      dynamoStream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      removalPolicy,
      // The same definition the local store creates its table from.
      globalSecondaryIndexes: TABLE_INDEXES.map((index) => ({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
        projectionType:
          index.projection === 'ALL' ? dynamodb.ProjectionType.ALL : dynamodb.ProjectionType.KEYS_ONLY,
      })),
    });

    const functions = {} as Record<AllotFunctionName, NodejsFunction>;
    for (const name of FUNCTION_NAMES) {
      functions[name] = this.createFunction(name, FUNCTION_SETTINGS[name], removalPolicy, logRetention);
    }
    this.functions = functions;
    this.apiFunction = functions.api;
    this.streamFunction = functions.stream;

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    // The event source also grants the stream reads (and the dead-letter queue's send) to the function.
    this.streamFunction.addEventSource(
      new DynamoEventSource(this.table, streamEventSourceProps(this.deadLetterQueue)),
    );
    this.historyFunction = functions.history;
    this.historyFunction.addEventSource(new DynamoEventSource(this.table, historyEventSourceProps()));

    // One integration per function, allowed from any route of this API: per-route permissions would put
    // some thirty statements on the api function's resource policy for no gain.
    const integrations = {} as Record<ApiFunctionName, HttpLambdaIntegration>;
    for (const name of API_FUNCTIONS) {
      integrations[name] = new HttpLambdaIntegration(`${capitalize(name)}Integration`, functions[name], {
        scopePermissionToRoute: false,
      });
    }
    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      apiName: `${Stack.of(this).stackName}-${id}`,
      description: 'Allot allocation service (api.md)',
      // Every route, `$default` included, needs SigV4: an unsigned request never reaches a function.
      defaultAuthorizer: props.apiAuthorizer ?? new HttpIamAuthorizer(),
      // Unknown paths and methods reach our router, which answers the contract's 404/405 `Status` bodies.
      // Its own integration object with the permission scoped to the route: the API-wide permission above
      // allows `<api>/*/*/*`, which `$default` invocations (`<api>/<stage>/$default`) do not match.
      defaultIntegration: new HttpLambdaIntegration('DefaultIntegration', functions.api),
      createDefaultStage: false,
    });
    for (const route of ALL_ROUTES) {
      this.httpApi.addRoutes({
        path: route.path,
        methods: [apigw.HttpMethod[route.method]],
        integration: integrations[route.function],
      });
    }

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logRetention, removalPolicy });
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTimeEpoch',
            ip: '$context.identity.sourceIp',
            caller: '$context.identity.caller',
            userArn: '$context.identity.userArn',
            method: '$context.httpMethod',
            path: '$context.path',
            routeKey: '$context.routeKey',
            status: '$context.status',
            responseLength: '$context.responseLength',
            latency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            authorizerError: '$context.authorizer.error',
          }),
        ),
      },
    });
    this.url = this.stage.url;

    this.eventBus = props.eventBus ?? new events.EventBus(this, 'EventBus', { description: 'Allot events' });
    this.streamFunction.addEnvironment('EVENT_BUS_NAME', this.eventBus.eventBusName);
    // PutEvents on this bus only (the grant names the bus ARN).
    this.eventBus.grantPutEventsTo(this.streamFunction);
    this.requestDeadLetterQueue = new sqs.Queue(this, 'RequestDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    this.claimRequestRule = this.requestRule('ClaimRequestRule', CLAIM_REQUESTED, functions.claim);
    this.releaseRequestRule = this.requestRule('ReleaseRequestRule', RELEASE_REQUESTED, functions.release);
    // EventBridge invokes asynchronously: a request the function fails on (a 5xx, thrown for bus events
    // only) is retried by Lambda, then lands in the same queue as those EventBridge could not deliver.
    for (const fn of [functions.claim, functions.release]) {
      fn.configureAsyncInvoke({
        onFailure: new SqsDestination(this.requestDeadLetterQueue),
        retryAttempts: 2,
        maxEventAge: Duration.hours(2),
      });
    }

    this.repairSchedule = scheduleRepairs(
      this,
      functions.repair,
      props.repairInterval ?? Duration.minutes(10),
    );
    this.alarms = this.createAlarms(props);
    this.dashboard = this.createDashboard(props.poolUtilisationThreshold ?? 90);

    this.acknowledgeNagFindings();
  }

  /** Routes one request detail type to a function; deliveries that still fail go to a queue. */
  private requestRule(id: string, detailType: string, target: NodejsFunction): events.Rule {
    return new events.Rule(this, id, {
      eventBus: this.eventBus,
      description: `Allot: ${detailType} events to the ${target.node.id} function`,
      // Any source but Allot's own: its events have other detail types anyway, this keeps it explicit.
      eventPattern: { detailType: [detailType], source: [{ 'anything-but': EVENT_SOURCE }] as never },
      targets: [
        new targets.LambdaFunction(target, {
          deadLetterQueue: this.requestDeadLetterQueue,
          retryAttempts: 4,
          maxEventAge: Duration.hours(2),
        }),
      ],
    });
  }

  /** The largest utilisation any pool reported (Metrics Insights over every pool's dimension set). */
  public metricMaxPoolUtilisation(period = Duration.minutes(5)): cloudwatch.IMetric {
    return new cloudwatch.MathExpression({
      expression: `SELECT MAX(PoolUtilisation) FROM SCHEMA("${METRICS_NAMESPACE}", Namespace, Pool, PoolKind, service)`,
      usingMetrics: {},
      label: 'Max pool utilisation (%)',
      period,
    });
  }

  /** One of the functions' EMF metrics (functions/metrics.ts). */
  public metric(name: string, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: name,
      dimensionsMap: { service: 'allot' },
      ...props,
    });
  }

  private createAlarms(props: AllotServiceProps): cloudwatch.Alarm[] {
    const alarms: cloudwatch.Alarm[] = [];
    const add = (
      id: string,
      description: string,
      metric: cloudwatch.IMetric,
      threshold: number,
      extra = {},
    ) => {
      const alarm = new cloudwatch.Alarm(this, id, {
        alarmDescription: `Allot: ${description}`,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...extra,
      });
      if (props.alarmTopic) {
        alarm.addAlarmAction(new SnsAction(props.alarmTopic));
        alarm.addOkAction(new SnsAction(props.alarmTopic));
      }
      alarms.push(alarm);
    };
    const oneMinute = { period: Duration.minutes(1) };
    add(
      'StreamFailuresAlarm',
      'stream records gave up on and sent to the dead-letter queue',
      this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ ...oneMinute, statistic: 'Maximum' }),
      0,
    );
    add(
      'RequestFailuresAlarm',
      'EventBridge requests that could not be delivered, in their dead-letter queue',
      this.requestDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        ...oneMinute,
        statistic: 'Maximum',
      }),
      0,
    );
    add(
      'StreamIteratorAgeAlarm',
      'the stream function is more than a minute behind the table',
      this.streamFunction.metric('IteratorAge', { ...oneMinute, statistic: 'Maximum' }),
      60_000,
    );
    add(
      'HistoryIteratorAgeAlarm',
      'the history function is more than a minute behind the table: watches get changes late',
      this.historyFunction.metric('IteratorAge', { ...oneMinute, statistic: 'Maximum' }),
      60_000,
    );
    for (const name of FUNCTION_NAMES) {
      const fn = this.functions[name];
      add(`${capitalize(name)}ErrorsAlarm`, `the ${name} function failed`, fn.metricErrors(oneMinute), 0);
      add(
        `${capitalize(name)}ThrottlesAlarm`,
        `the ${name} function was throttled`,
        fn.metricThrottles(oneMinute),
        0,
      );
    }
    add(
      'RepairsAlarm',
      'the repair sweep fixed state that something upstream lost (a dead-lettered stream record, or a defect)',
      repairsMetric(),
      0,
    );
    add(
      'PoolUtilisationAlarm',
      `a pool is above ${props.poolUtilisationThreshold ?? 90}% utilisation`,
      this.metricMaxPoolUtilisation(),
      props.poolUtilisationThreshold ?? 90,
      // Utilisation is reported when it changes: no report means no change, so the state stands.
      { treatMissingData: cloudwatch.TreatMissingData.IGNORE },
    );
    return alarms;
  }

  private createDashboard(poolUtilisationThreshold: number): cloudwatch.Dashboard {
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
    });
    const sum = { statistic: 'Sum', period: Duration.minutes(1) };
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Claims',
        left: [this.metric('ClaimsAllocated', sum), this.metric('ClaimsPending', sum)],
        right: [this.metric('ConditionalCheckFailures', sum)],
      }),
      new cloudwatch.GraphWidget({
        title: 'Claim latency (ms)',
        left: [
          this.metric('ClaimLatency', { statistic: 'p50' }),
          this.metric('ClaimLatency', { statistic: 'p99' }),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'Pool utilisation (%)',
        left: [this.metricMaxPoolUtilisation()],
        leftAnnotations: [{ value: poolUtilisationThreshold, label: 'alarm' }],
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Stream',
        left: [
          this.streamFunction.metric('IteratorAge', { statistic: 'Maximum' }),
          this.historyFunction.metric('IteratorAge', { statistic: 'Maximum', label: 'history IteratorAge' }),
        ],
        right: [
          this.metric('ReclaimRecordAge', { statistic: 'Maximum' }),
          this.metric('EventsPublished', sum),
          repairsMetric(),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'Function errors and throttles',
        left: FUNCTION_NAMES.map((name) => this.functions[name].metricErrors({ label: `${name} errors` })),
        right: FUNCTION_NAMES.map((name) =>
          this.functions[name].metricThrottles({ label: `${name} throttles` }),
        ),
      }),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms] }),
    );
    return dashboard;
  }

  private createFunction(
    name: AllotFunctionName,
    settings: FunctionSettings,
    removalPolicy: RemovalPolicy,
    logRetention: logs.RetentionDays,
  ): NodejsFunction {
    const id = capitalize(name);
    const logGroup = new logs.LogGroup(this, `${id}Logs`, { retention: logRetention, removalPolicy });

    // Our own role instead of AWSLambdaBasicExecutionRole: that managed policy may create and write any
    // log group in the account; this role writes only the function's own.
    const role = new iam.Role(this, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Allot ${name} function`,
    });
    logGroup.grantWrite(role);
    role.addToPolicy(
      new iam.PolicyStatement({ actions: [...settings.tableActions], resources: [this.table.tableArn] }),
    );
    if (settings.queriedIndexes.length > 0) {
      role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['dynamodb:Query'],
          resources: settings.queriedIndexes.map((index) => `${this.table.tableArn}/index/${index}`),
        }),
      );
    }

    return new NodejsFunction(this, `${id}Function`, {
      description: settings.description,
      entry: fileURLToPath(new URL(`../../functions/${name}.ts`, import.meta.url)),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout: settings.timeout,
      role,
      logGroup,
      tracing: lambda.Tracing.ACTIVE,
      environment: {
        TABLE_NAME: this.table.tableName,
        POWERTOOLS_SERVICE_NAME: 'allot',
        POWERTOOLS_METRICS_NAMESPACE: 'Allot',
        // Stack traces point into functions/ and lib/, not the minified bundle.
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        // esbuild from node_modules, never Docker: synth works offline and on machines without Docker.
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: 'node24',
        // Prefer packages' ESM builds, so esbuild can drop what we do not import.
        mainFields: ['module', 'main'],
        // CommonJS dependencies bundled into an ES module still call `require` (for Node built-ins).
        banner:
          "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        minify: true,
        sourceMap: true,
        // Everything is bundled, the AWS SDK included: the deployed functions run the SDK version the
        // tests ran (pinned), not whatever the runtime ships. It costs about 220 KB per bundle, within
        // the 500 KB budget (lib/cloud/functions.ts), with the credential chain cut to the links that
        // can apply in Lambda (functions/lambda-credentials.ts says which, and why).
        externalModules: [],
        esbuildArgs: { '--alias': [`@aws-sdk/credential-provider-node=${LAMBDA_CREDENTIALS}`] },
      },
    });
  }

  /**
   * cdk-nag (AwsSolutions) findings this design keeps on purpose, acknowledged where they arise so every
   * app using the construct inherits the reasons.
   */
  private acknowledgeNagFindings(): void {
    for (const name of FUNCTION_NAMES) {
      const role = this.functions[name].role;
      if (!role) continue;
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'The only wildcard is X-Ray PutTraceSegments/PutTelemetryRecords (active tracing), which support ' +
          'no resource-level permissions; table, index, stream, log and queue access is on exact ARNs.',
      });
    }
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination of the stream event source mapping; a queue ' +
        'behind it would only move the same failure records again.',
    });
    Validations.of(this.requestDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination of the EventBridge request rules; a queue ' +
        'behind it would only move the same undelivered requests again.',
    });
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
