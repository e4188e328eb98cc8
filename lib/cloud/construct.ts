/**
 * The deployed service: one DynamoDB table, its Lambda functions (four behind an HTTP API, one on the
 * table's stream, one for CloudFormation's `Custom::AllotClaim`), the stream's dead-letter queue, an
 * EventBridge bus (events out, requests in), and the alarms and dashboard that watch them. It reads the
 * routes, the stream filter and the request rules from the same plain-data modules the local server
 * uses, so the two cannot drift.
 */
import { DEFAULT_HOLDING_RETENTION_DAYS } from '../domain/objects/holdings.ts';
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
import * as logs from 'aws-cdk-lib/aws-logs';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ALL_ROUTES, API_FUNCTIONS, type ApiFunctionName } from '../http/routes.ts';
import { historyEventSourceProps, streamEventSourceProps } from './event-sources.ts';
import { REQUEST_RULES, type RequestRule } from './requests.ts';
import { constructIdOf, createAllotFunction } from './lambda.ts';

import { TABLE_INDEXES, TABLE_PARTITION_KEY, TABLE_SORT_KEY, TTL_ATTRIBUTE } from '../store/schema.ts';

import { FUNCTION_NAMES, FUNCTION_SETTINGS, type AllotFunctionName } from './functions.ts';
import { repairsMetric, scheduleLeaseExpiry, scheduleRepairs } from './repair.ts';

export type { AllotFunctionName } from './functions.ts';

/** Who else may use the claim service token (`AllotServiceProps.consumers`). */
export interface AllotConsumers {
  /** Account ids (12 digits) whose stacks may use `Custom::AllotClaim`. */
  readonly accounts?: readonly string[];
  /** An AWS Organizations id (`o-…`): every account of the organization may. */
  readonly organizationId?: string;
}

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
   * How often the repair sweep runs over every namespace (lib/service/repair/sweep.ts); whole minutes.
   *
   * @default Duration.minutes(10)
   */
  readonly repairInterval?: Duration;

  /**
   * Other accounts (of this Region: a custom resource's service token must be) whose stacks may use
   * `Custom::AllotClaim` (docs/stacks.md). Each becomes a statement of the claim-resource function's
   * resource policy: CloudFormation invokes the function as the deploying principal of the other
   * account, which also needs `lambda:InvokeFunction` on it in its own IAM policy (CDK's deploy role
   * has it). This account's stacks need nothing here.
   *
   * @default none: stacks of this account only
   */
  readonly consumers?: AllotConsumers;

  /**
   * How long who held a value is kept after the holding ended (api.md, "The history of a value"): the
   * table's TTL deletes it after that; whole days.
   *
   * @default Duration.days(3 * 365)
   */
  readonly historyRetention?: Duration;
}

/** CloudWatch namespace of the functions' EMF metrics (functions/metrics.ts). */
export const METRICS_NAMESPACE = 'Allot';

export { historyEventSourceProps, streamEventSourceProps };

/** Rejects prop combinations CloudFormation would only fail on at deploy (or delete) time. */
function checkProps(props: AllotServiceProps): void {
  for (const account of props.consumers?.accounts ?? []) {
    if (!/^\d{12}$/.test(account))
      throw new Error(`AllotService: consumers.accounts: "${account}" is not a 12-digit account id`);
  }
  const organization = props.consumers?.organizationId;
  if (organization !== undefined && !/^o-[a-z0-9]{10,32}$/.test(organization))
    throw new Error(`AllotService: consumers.organizationId: "${organization}" is not an organization id`);
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
  public readonly functions: Readonly<Record<AllotFunctionName, lambda.Function>>;
  /** The function behind `$default` and every route that is not a claim write. */
  public readonly apiFunction: lambda.Function;
  /** The function on the table's stream. */
  public readonly streamFunction: lambda.Function;
  /** The provider of `Custom::AllotClaim` (lib/service/requests/claim-resource.ts). */
  public readonly claimResourceFunction: lambda.Function;
  /**
   * The service token of `Custom::AllotClaim`: the claim-resource function's ARN. `AllotClaim` and
   * `AllotIpAddresses` take it (bin/app.ts outputs it as `ClaimServiceToken`).
   */
  public readonly claimServiceToken: string;
  /** Where the stream's event source mapping reports batches it gave up on. */
  public readonly deadLetterQueue: sqs.Queue;
  /** The stream's second reader: the history watches read. */
  public readonly historyFunction: lambda.Function;
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
  /** Runs the repair function's lease expiry every minute (TTL alone may take days). */
  public readonly leaseExpirySchedule: events.Rule;
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

    const functions = {} as Record<AllotFunctionName, lambda.Function>;
    for (const name of FUNCTION_NAMES) {
      functions[name] = createAllotFunction(this, name, FUNCTION_SETTINGS[name], {
        table: this.table,
        removalPolicy,
        logRetention,
      });
    }
    this.functions = functions;
    this.apiFunction = functions.api;
    this.streamFunction = functions.stream;
    this.claimResourceFunction = functions['claim-resource'];
    this.claimServiceToken = this.claimResourceFunction.functionArn;
    this.allowConsumers(props.consumers ?? {});

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
    this.historyFunction.addEnvironment(
      'ALLOT_HISTORY_RETENTION_DAYS',
      String((props.historyRetention ?? Duration.days(DEFAULT_HOLDING_RETENTION_DAYS)).toDays()),
    );
    this.historyFunction.addEventSource(new DynamoEventSource(this.table, historyEventSourceProps()));

    // One integration per function, allowed from any route of this API: per-route permissions would put
    // some thirty statements on the api function's resource policy for no gain.
    const integrations = {} as Record<ApiFunctionName, HttpLambdaIntegration>;
    for (const name of API_FUNCTIONS) {
      integrations[name] = new HttpLambdaIntegration(`${constructIdOf(name)}Integration`, functions[name], {
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
    const [claimRule, releaseRule] = REQUEST_RULES.map((rule) => this.requestRule(rule));
    this.claimRequestRule = claimRule!;
    this.releaseRequestRule = releaseRule!;
    // EventBridge invokes asynchronously: a request the function fails on (a 5xx, thrown for bus events
    // only) is retried by Lambda, then lands in the same queue as those EventBridge could not deliver.
    for (const fn of [functions.claim, functions.release]) {
      fn.configureAsyncInvoke({
        onFailure: new SqsDestination(this.requestDeadLetterQueue),
        retryAttempts: 2,
        maxEventAge: Duration.hours(2),
      });
    }
    // CloudFormation invokes asynchronously too. The function answers CloudFormation itself, also on its
    // own errors; it throws only when the answer could not be sent, and then Lambda retries it (the
    // request is idempotent) within the resource's ServiceTimeout (lib/cloud/claim.ts), after which
    // CloudFormation has failed the resource and the request is only worth keeping in the queue.
    this.claimResourceFunction.configureAsyncInvoke({
      onFailure: new SqsDestination(this.requestDeadLetterQueue),
      retryAttempts: 2,
      maxEventAge: Duration.minutes(5),
    });

    this.repairSchedule = scheduleRepairs(
      this,
      functions.repair,
      props.repairInterval ?? Duration.minutes(10),
    );
    this.leaseExpirySchedule = scheduleLeaseExpiry(this, functions.repair);
    this.alarms = this.createAlarms(props);
    this.dashboard = this.createDashboard(props.poolUtilisationThreshold ?? 90);

    this.acknowledgeNagFindings();
  }

  /**
   * Lets the accounts `consumers` names invoke the claim-resource function, in its resource policy: one
   * statement per account, and one for the organization (`aws:PrincipalOrgID`, Lambda's PrincipalOrgID).
   *
   * A Lambda service token, not an SNS-backed custom resource: CloudFormation invokes the function
   * itself, asynchronously, as the principal deploying the stack (Lambda Developer Guide, "Using Lambda
   * with CloudFormation"), and a resource policy names accounts and, since 2022, a whole organization
   * (AWS Compute Blog, "Using organization IDs as principals in Lambda resource policies"). An SNS token
   * would add a topic, its policy and a subscription to say the same, and deliver one hop later; the
   * answer goes to the ResponseURL either way.
   */
  private allowConsumers(consumers: AllotConsumers): void {
    for (const account of consumers.accounts ?? []) {
      this.claimResourceFunction.addPermission(`Consumer${account}`, {
        principal: new iam.AccountPrincipal(account),
        action: 'lambda:InvokeFunction',
      });
    }
    if (consumers.organizationId) {
      this.claimResourceFunction.addPermission('ConsumerOrganization', {
        principal: new iam.OrganizationPrincipal(consumers.organizationId),
        action: 'lambda:InvokeFunction',
      });
    }
  }

  /** One request rule of lib/cloud/requests.ts, to its function; deliveries that still fail go to a queue. */
  private requestRule(rule: RequestRule): events.Rule {
    return new events.Rule(this, rule.id, {
      eventBus: this.eventBus,
      description: rule.description,
      eventPattern: { detailType: rule.pattern['detail-type'], source: rule.pattern.source as never },
      targets: [
        new targets.LambdaFunction(this.functions[rule.target], {
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
      add(`${constructIdOf(name)}ErrorsAlarm`, `the ${name} function failed`, fn.metricErrors(oneMinute), 0);
      add(
        `${constructIdOf(name)}ThrottlesAlarm`,
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
