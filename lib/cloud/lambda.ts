/**
 * How one of the service's functions is built: its log group, its own role with the table grants its
 * settings name (lib/cloud/functions.ts), and its code. Run from the TypeScript source (the clone, its
 * tests, bin/app.ts), the code is bundled from `functions/<name>.ts` with the local esbuild at synth; run
 * from the package `npm pack` built (bin/pack.ts), it is the bundle that same synth made at pack time,
 * deployed as it is: a CDK app that installed the package needs no esbuild, no TypeScript and no network
 * to synthesize, and deploys the bytes the package's tests ran.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { AllotFunctionName, FunctionSettings } from './functions.ts';

/**
 * Set by bin/pack.ts (an esbuild `define`) in the built package: the folder of the packed bundles,
 * relative to the built module. Undefined when this module runs from its TypeScript source.
 */
declare const ALLOT_PACKED_BUNDLES: string | undefined;

/** Where the packed bundles are (`<folder>/<name>/index.mjs`), or undefined: bundle from source. */
export function packedBundles(): string | undefined {
  if (typeof ALLOT_PACKED_BUNDLES !== 'string') return undefined;
  const folder = fileURLToPath(new URL(ALLOT_PACKED_BUNDLES, import.meta.url));
  if (!existsSync(folder)) throw new Error(`allot: the package's function bundles are missing (${folder})`);
  return folder;
}

/** `claim-resource` → `ClaimResource`: the construct ids the function's resources are named by. */
export function constructIdOf(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** The SDK's default credential chain as the bundles have it (`--alias`, below). */
const LAMBDA_CREDENTIALS = '../../functions/lambda-credentials.ts';

export interface AllotFunctionOptions {
  readonly table: dynamodb.ITableV2;
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: logs.RetentionDays;
}

export function createAllotFunction(
  scope: Construct,
  name: AllotFunctionName,
  settings: FunctionSettings,
  options: AllotFunctionOptions,
): lambda.Function {
  const id = constructIdOf(name);
  const { table, removalPolicy, logRetention } = options;
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, { retention: logRetention, removalPolicy });

  // Our own role instead of AWSLambdaBasicExecutionRole: that managed policy may create and write any
  // log group in the account; this role writes only the function's own.
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: `Allot ${name} function`,
  });
  logGroup.grantWrite(role);
  role.addToPolicy(
    new iam.PolicyStatement({ actions: [...settings.tableActions], resources: [table.tableArn] }),
  );
  if (settings.queriedIndexes.length > 0) {
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: settings.queriedIndexes.map((index) => `${table.tableArn}/index/${index}`),
      }),
    );
  }

  const common = {
    description: settings.description,
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: 512,
    timeout: settings.timeout,
    role,
    logGroup,
    tracing: lambda.Tracing.ACTIVE,
    environment: {
      TABLE_NAME: table.tableName,
      POWERTOOLS_SERVICE_NAME: 'allot',
      POWERTOOLS_METRICS_NAMESPACE: 'Allot',
      // Stack traces point into functions/ and lib/, not the minified bundle.
      NODE_OPTIONS: '--enable-source-maps',
    },
  };

  const packed = packedBundles();
  if (packed) {
    return new lambda.Function(scope, `${id}Function`, {
      ...common,
      code: lambda.Code.fromAsset(join(packed, name)),
      handler: 'index.handler',
    });
  }
  return new NodejsFunction(scope, `${id}Function`, {
    ...common,
    entry: fileURLToPath(new URL(`../../functions/${name}.ts`, import.meta.url)),
    handler: 'handler',
    bundling: {
      // esbuild from node_modules, never Docker: synth works offline and on machines without Docker.
      forceDockerBundling: false,
      format: OutputFormat.ESM,
      target: 'node24',
      // Prefer packages' ESM builds, so esbuild can drop what we do not import.
      mainFields: ['module', 'main'],
      // CommonJS dependencies bundled into an ES module still call `require` (for Node built-ins).
      banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      minify: true,
      sourceMap: true,
      // Everything is bundled, the AWS SDK included: the deployed functions run the SDK version the
      // tests ran (pinned), not whatever the runtime ships. It costs about 220 KB per bundle, within
      // the 500 KB budget (lib/cloud/functions.ts), with the credential chain cut to the links that
      // can apply in Lambda (functions/lambda-credentials.ts says which, and why).
      externalModules: [],
      esbuildArgs: {
        '--alias': [
          `@aws-sdk/credential-provider-node=${fileURLToPath(new URL(LAMBDA_CREDENTIALS, import.meta.url))}`,
        ],
      },
    },
  });
}
