/**
 * The parts every object schema is made of (schemas.ts, pool-schemas.ts): the Schema type, references,
 * and the limits the request checks share. Plain data, pure.
 */
import type { StatusReason } from '../errors.ts';

export interface Schema {
  type?: 'object' | 'string' | 'integer' | 'boolean' | 'array';
  description?: string;
  properties?: Record<string, Schema>;
  required?: readonly string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  maxProperties?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  enum?: readonly (string | number | boolean)[];
  const?: string | number | boolean;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  oneOf?: readonly Schema[];
  allOf?: readonly Schema[];
  $ref?: string;
  readOnly?: boolean;
  default?: unknown;
  format?: string;
}

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** api.md, "Objects": DNS labels; the same rule as names.ts (a test checks they agree). */
export const NAME_PATTERN = '^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$';
export const NAME_MAX = 63;
export const MAP_MAX_ENTRIES = 256;
export const MAP_KEY_MAX = 253;
export const MAP_VALUE_MAX = 1024;
/**
 * What `kubectl apply` keeps of the manifest it applied: the whole object as JSON, longer than any
 * other value (Kubernetes allows 256 KiB of annotations); bounded here by the 64 KiB body.
 */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
export const LAST_APPLIED_MAX = 65536;
export const REF_STRING_MAX = 253;
export const RESERVED_MAX = 256;
export const WITHIN_MAX = 100;
export const RANGES_MAX = 1000;
/** A lease's length, in seconds: a minute to a year (api.md, "Claim"). */
export const LEASE_SECONDS_MIN = 60;
export const LEASE_SECONDS_MAX = 31_536_000;
/** A pool's `spec.quarantineSeconds`: 0 (none, the default) up to a year. */
export const QUARANTINE_SECONDS_MAX = 31_536_000;
/** A shared pool (domain/objects/sharing.ts): the most values one namespace may hold of it; its entries. */
export const SHARED_HOLDERS_MAX = 4000;
export const SHARED_WITH_MAX = 1000;

export const STATUS_REASONS: readonly StatusReason[] = [
  'BadRequest',
  'NotFound',
  'MethodNotAllowed',
  'AlreadyExists',
  'PoolInUse',
  'ClaimInUse',
  'Conflict',
  'Expired',
  'RequestEntityTooLarge',
  'NotAcceptable',
  'UnsupportedMediaType',
  'Invalid',
  'InternalError',
];

export const refString: Schema = { type: 'string', minLength: 1, maxLength: REF_STRING_MAX };
export const timestamp: Schema = { type: 'string', format: 'date-time', readOnly: true };
export const decimal = (description: string): Schema => ({
  type: 'string',
  pattern: '^[0-9]+$',
  description,
});
export const prefixList = (description: string): Schema => ({
  type: 'array',
  minItems: 1,
  maxItems: RANGES_MAX,
  items: { type: 'string', format: 'cidr', description: 'a CIDR prefix, e.g. 10.0.0.0/16 or 2001:db8::/48' },
  description,
});
