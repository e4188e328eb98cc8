/**
 * How requests reach the functions in the deployed stack, as plain data: the functions other services
 * and stacks invoke directly, and the event bus rules that deliver request events. The CDK construct
 * builds its rules from `REQUEST_RULES`; the local server (lib/local/aws-apis.ts) answers Lambda's Invoke
 * for `DIRECT_FUNCTIONS` and routes EventBridge's PutEvents by the same rules, so the two cannot drift.
 */
import { CLAIM_REQUESTED, EVENT_SOURCE, RELEASE_REQUESTED } from '../domain/events.ts';
import { matchesPattern, type FilterPattern } from './stream-filter.ts';

/**
 * The functions invoked directly: `claim` and `release` by other services (Lambda Invoke, Step Functions;
 * docs/events.md, "Requests in"), `claim-resource` by CloudFormation for `Custom::AllotClaim`
 * (its ARN is `AllotService.claimServiceToken`).
 */
export const DIRECT_FUNCTIONS = ['claim', 'release', 'claim-resource'] as const;
export type DirectFunctionName = (typeof DIRECT_FUNCTIONS)[number];

export interface RequestRule {
  /** The rule's construct id in `AllotService`. */
  readonly id: string;
  readonly description: string;
  /** The event pattern, as EventBridge stores it (`detail-type`, not CDK's `detailType`). */
  readonly pattern: FilterPattern & { 'detail-type': string[]; source: unknown[] };
  readonly target: 'claim' | 'release';
}

/** Any source but Allot's own: its events have other detail types anyway, this keeps it explicit. */
const NOT_ALLOT = [{ 'anything-but': EVENT_SOURCE }];

export const REQUEST_RULES: readonly RequestRule[] = [
  {
    id: 'ClaimRequestRule',
    description: `Allot: ${CLAIM_REQUESTED} events to the claim function`,
    pattern: { 'detail-type': [CLAIM_REQUESTED], source: NOT_ALLOT },
    target: 'claim',
  },
  {
    id: 'ReleaseRequestRule',
    description: `Allot: ${RELEASE_REQUESTED} events to the release function`,
    pattern: { 'detail-type': [RELEASE_REQUESTED], source: NOT_ALLOT },
    target: 'release',
  },
];

/** The rules an event (as EventBridge delivers it: `source`, `detail-type`, `detail`, …) matches. */
export function rulesMatching(event: Record<string, unknown>): RequestRule[] {
  return REQUEST_RULES.filter((rule) => matchesPattern(event, rule.pattern));
}
