/**
 * The vocabulary `Custom::AllotClaim` shares between its construct (lib/cloud/claim.ts) and its provider
 * (lib/service/requests/claim-resource.ts): the resource type and the annotations a claim made by a stack
 * carries (docs/stacks.md).
 */
export const CLAIM_RESOURCE_TYPE = 'Custom::AllotClaim';

/** The stack that made a claim: its `StackId`, an ARN ending in the stack's unique id. */
export const STACK_ID_ANNOTATION = 'cloudformation.allot/stack-id';
/** The resource of that stack that made it: its `LogicalResourceId`. */
export const LOGICAL_ID_ANNOTATION = 'cloudformation.allot/logical-id';
