/**
 * The package's entry point (`allot`, from `npm pack`): the service, and what other stacks use it by.
 * `bin/pack.ts` builds it into the package's JavaScript (ES module and CommonJS) and type declarations.
 */
export * from './construct.ts';
export { AllotClaim, CLAIM_SERVICE_TIMEOUT } from './claim.ts';
export type { AllotClaimProps, AllotOwnerRef, AllotPoolRef } from './claim.ts';
export { AllotIpAddresses } from './ip-addresses.ts';
export type { AllotIpAddressesProps } from './ip-addresses.ts';
export {
  CLAIM_RESOURCE_TYPE,
  LOGICAL_ID_ANNOTATION,
  STACK_ID_ANNOTATION,
} from '../domain/objects/claim-resource.ts';
