/** Reading a function's DynamoDB permissions out of a synthesized AllotService template. */
import type { CfnElement, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import type { AllotFunctionName, AllotService } from '../../lib/cloud/construct.ts';

/**
 * A function's DynamoDB permissions as `{ resource: actions }`, the resource named `table`,
 * `index/<name>` or `stream`, read from every statement of every policy attached to its role.
 */
export function dynamoPermissions(
  template: Template,
  stack: Stack,
  service: AllotService,
  name: AllotFunctionName,
): Record<string, string[]> {
  const logicalId = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const role = logicalId(service.functions[name].role!);
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
    JSON.stringify(policy.Properties.Roles).includes(`"${role}"`),
  );
  const table = logicalId(service.table);
  const resourceName = (resource: unknown): string => {
    const text = JSON.stringify(resource);
    if (text === JSON.stringify({ 'Fn::GetAtt': [table, 'Arn'] })) return 'table';
    if (text === JSON.stringify({ 'Fn::GetAtt': [table, 'StreamArn'] })) return 'stream';
    const index = /^\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["([^"]+)","Arn"\]\},"\/index\/([^"]+)"\]\]\}$/.exec(
      text,
    );
    if (index && index[1] === table) return `index/${index[2]}`;
    return text;
  };
  const permissions: Record<string, string[]> = {};
  for (const policy of policies) {
    for (const statement of policy.Properties.PolicyDocument.Statement) {
      const actions = [statement.Action].flat() as string[];
      const dynamo = actions.filter((action) => action.startsWith('dynamodb:'));
      if (dynamo.length === 0) continue;
      // Anything but Allow is listed apart (`Deny:table`), so a comparison with what is used fails.
      const effect = statement.Effect === 'Allow' ? '' : `${statement.Effect}:`;
      for (const resource of [statement.Resource].flat()) {
        (permissions[effect + resourceName(resource)] ??= []).push(...dynamo);
      }
    }
  }
  for (const [resource, actions] of Object.entries(permissions))
    permissions[resource] = [...new Set(actions)].sort();
  return permissions;
}
