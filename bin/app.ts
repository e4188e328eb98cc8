/**
 * The CDK app (`npx cdk synth`, `npx cdk deploy`): one stack holding the service, checked by cdk-nag's
 * AwsSolutions pack at synth. The findings the design keeps are acknowledged, with reasons, inside
 * `AllotService` where they arise.
 */
import { App, CfnOutput, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AllotService } from '../lib/cloud/construct.ts';

const app = new App();

const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
const stack = new Stack(app, 'AllotStack', {
  description: 'Allot: allocation service for numbered resources',
  // Environment-agnostic unless the CLI knows the account and region; nothing in the stack looks up context.
  ...(account && region ? { env: { account, region } } : {}),
});

const service = new AllotService(stack, 'Allot');

new CfnOutput(stack, 'ApiUrl', { value: service.url, description: 'Base URL of the HTTP API (SigV4)' });
new CfnOutput(stack, 'TableName', { value: service.table.tableName, description: 'The DynamoDB table' });
new CfnOutput(stack, 'ClaimServiceToken', {
  value: service.claimServiceToken,
  description: 'The serviceToken of AllotClaim and AllotIpAddresses in other stacks (docs/stacks.md)',
});
new CfnOutput(stack, 'EventBusName', {
  value: service.eventBus.eventBusName,
  description: 'Where Allot publishes its events and takes claim and release requests',
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
