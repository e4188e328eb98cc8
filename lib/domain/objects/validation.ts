/**
 * Checks request bodies against the contract (api.md, "Objects") and returns them in canonical form.
 * Every failing field becomes one cause; the caller answers 422 Invalid with all of them. Field lists,
 * enums and limits come from schemas.ts, which the OpenAPI document is made from too.
 */
import { InvalidError, type Cause } from '../errors.ts';
import { API_VERSION, type ObjectKind } from '../kinds.ts';
import { nameProblem } from '../names.ts';
import {
  fieldsOf,
  MAP_KEY_MAX,
  MAP_MAX_ENTRIES,
  MAP_VALUE_MAX,
  LAST_APPLIED_ANNOTATION,
  LAST_APPLIED_MAX,
  QUARANTINE_SECONDS_MAX,
  REF_STRING_MAX,
  RESERVED_MAX,
  SCHEMAS,
  specFields,
  WITHIN_MAX,
} from './schemas.ts';

export { fieldsOf, specFields, RESERVED_MAX, WITHIN_MAX };

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Collects causes; `fail()` throws them all as one 422. */
export class Causes {
  readonly list: Cause[] = [];
  add(field: string, message: string): void {
    this.list.push({ field, message });
  }
  addAll(causes: readonly Cause[]): void {
    this.list.push(...causes);
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
  throwIfAny(kind: string, name: string | undefined): void {
    if (this.empty) return;
    const first = this.list[0]!;
    const more = this.list.length > 1 ? ` (and ${this.list.length - 1} more)` : '';
    // A cause that already names its field reads alone (api.md's example message).
    const lead = first.message.startsWith(first.field) ? first.message : `${first.field}: ${first.message}`;
    throw new InvalidError(`${lead}${more}`, this.list).about(kind, name);
  }
}

export interface Metadata {
  name: string;
  namespace: string;
  uid: string;
  generation: number;
  creationTimestamp: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** What a body says about the object, before the server adds uid, generation and timestamps. */
export interface BodyMetadata {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

function stringMap(value: unknown, field: string, causes: Causes): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    causes.add(field, 'must be a map of strings to strings');
    return {};
  }
  const entries = Object.entries(value);
  if (entries.length > MAP_MAX_ENTRIES) {
    causes.add(field, `must hold at most ${MAP_MAX_ENTRIES} entries`);
    return {};
  }
  const result: Record<string, string> = {};
  for (const [key, entry] of entries) {
    if (key.length === 0 || key.length > MAP_KEY_MAX)
      causes.add(`${field}[${clip(key)}]`, `keys are 1 to ${MAP_KEY_MAX} characters`);
    // JSON objects cannot keep "__proto__" as an ordinary key through every parser (nor is it a valid
    // Kubernetes key), so it is refused rather than silently dropped.
    else if (key === '__proto__') causes.add(`${field}[${key}]`, 'is a reserved key');
    else if (typeof entry !== 'string') causes.add(`${field}[${key}]`, 'must be a string');
    else if (entry.length > valueMax(field, key))
      causes.add(`${field}[${key}]`, `must be at most ${valueMax(field, key)} characters`);
    else result[key] = entry;
  }
  return result;
}

const valueMax = (field: string, key: string) =>
  field === 'metadata.annotations' && key === LAST_APPLIED_ANNOTATION ? LAST_APPLIED_MAX : MAP_VALUE_MAX;

export function clip(text: string, max = 40): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Checks the envelope every object shares: apiVersion, kind, metadata. `pathName` is the name in the URL
 * (PUT), which the body's name must match when it has one.
 */
export function checkEnvelope(
  body: JsonObject,
  expected: { kind: ObjectKind; namespace: string; pathName?: string; nameMax?: 63 | 253 },
  causes: Causes,
): BodyMetadata {
  if (body.apiVersion !== undefined && body.apiVersion !== API_VERSION) {
    causes.add('apiVersion', `must be ${API_VERSION}`);
  }
  if (body.kind !== undefined && body.kind !== expected.kind) {
    causes.add('kind', `must be ${expected.kind} on this path`);
  }
  const metadata = body.metadata === undefined ? {} : body.metadata;
  if (!isObject(metadata)) {
    causes.add('metadata', 'must be an object');
    return { name: expected.pathName ?? '', labels: {}, annotations: {} };
  }
  let name = expected.pathName ?? '';
  if (metadata.name === undefined) {
    if (expected.pathName === undefined) causes.add('metadata.name', 'is required');
  } else {
    const problem = nameProblem(metadata.name, expected.nameMax ?? 63);
    if (problem) causes.add('metadata.name', problem);
    else if (expected.pathName !== undefined && metadata.name !== expected.pathName) {
      causes.add('metadata.name', `must match the name in the path (${expected.pathName})`);
    } else name = metadata.name as string;
  }
  if (metadata.namespace !== undefined && metadata.namespace !== expected.namespace) {
    causes.add('metadata.namespace', `must match the namespace in the path (${expected.namespace})`);
  }
  return {
    name,
    labels: stringMap(metadata.labels, 'metadata.labels', causes),
    annotations: stringMap(metadata.annotations, 'metadata.annotations', causes),
  };
}

/** Rejects spec fields the contract does not define, so a typo does not pass silently. */
export function rejectUnknownFields(
  spec: JsonObject,
  known: readonly string[],
  causes: Causes,
  prefix = 'spec',
): void {
  for (const key of Object.keys(spec)) {
    if (!known.includes(key)) causes.add(`${prefix}.${clip(key)}`, 'is not a field of this kind');
  }
}

export interface ObjectRef {
  kind: string;
  name: string;
  apiVersion?: string;
  /** A claim's poolRef only: a pool of another namespace that shares itself with the claim's. */
  namespace?: string;
}

/**
 * Reads a `{ kind, name, apiVersion? }` reference (a claim's: `namespace?` too); the kind is checked by the
 * caller.
 */
export function objectRef(
  value: unknown,
  field: string,
  causes: Causes,
  schema: 'PoolRef' | 'ClaimPoolRef' = 'PoolRef',
): ObjectRef | undefined {
  if (!isObject(value)) {
    causes.add(field, 'is required: { kind, name }');
    return undefined;
  }
  rejectUnknownFields(value, fieldsOf(schema), causes, field);
  const ref: ObjectRef = { kind: '', name: '' };
  if (typeof value.kind !== 'string') causes.add(`${field}.kind`, 'must be a string');
  else ref.kind = value.kind;
  const problem = nameProblem(value.name);
  if (problem) causes.add(`${field}.name`, problem);
  else ref.name = value.name as string;
  if (value.apiVersion !== undefined) {
    if (typeof value.apiVersion !== 'string') causes.add(`${field}.apiVersion`, 'must be a string');
    else ref.apiVersion = value.apiVersion;
  }
  if (value.namespace !== undefined) {
    const problem = nameProblem(value.namespace);
    if (problem) causes.add(`${field}.namespace`, problem);
    else ref.namespace = value.namespace as string;
  }
  return ref;
}

export interface OwnerRef {
  apiVersion?: string;
  kind: string;
  name: string;
  uid?: string;
}

export function ownerRef(value: unknown, field: string, causes: Causes): OwnerRef | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    causes.add(field, 'must be an object { kind, name, uid }');
    return undefined;
  }
  rejectUnknownFields(value, fieldsOf('OwnerRef'), causes, field);
  const owner: OwnerRef = { kind: '', name: '' };
  const required: readonly string[] = SCHEMAS.OwnerRef.required;
  for (const key of ['kind', 'name', 'uid'] as const) {
    const entry = value[key];
    if (entry === undefined && !required.includes(key)) continue;
    if (!isRefString(entry)) causes.add(`${field}.${key}`, REF_STRING_PROBLEM);
    else owner[key] = entry;
  }
  // Accepted above, so kept: the owner is copied to the allocation object as given (api.md, "Claim").
  if (value.apiVersion !== undefined) {
    if (!isRefString(value.apiVersion)) causes.add(`${field}.apiVersion`, REF_STRING_PROBLEM);
    else owner.apiVersion = value.apiVersion;
  }
  return owner;
}

const REF_STRING_PROBLEM = `must be a string of 1 to ${REF_STRING_MAX} characters`;

function isRefString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= REF_STRING_MAX;
}

export type ReclaimPolicy = (typeof SCHEMAS.ReclaimPolicy.enum)[number];

/**
 * A pool's `spec.quarantineSeconds` (api.md, "Pools"), when given. Not on a pool of a range of prefix
 * lengths: its prefixes are held through overlap marks that a quarantine would need too (docs/leases.md).
 */
export function quarantineSeconds(spec: Record<string, unknown>, causes: Causes): number | undefined {
  const seconds = spec.quarantineSeconds;
  if (seconds === undefined) return undefined;
  if (
    typeof seconds !== 'number' ||
    !Number.isInteger(seconds) ||
    seconds < 0 ||
    seconds > QUARANTINE_SECONDS_MAX
  )
    causes.add('spec.quarantineSeconds', `must be an integer 0..${QUARANTINE_SECONDS_MAX}`);
  else if (seconds > 0 && spec.allocationPrefixLengths !== undefined)
    causes.add('spec.quarantineSeconds', 'is not supported on pools of a range of prefix lengths');
  else return seconds;
  return undefined;
}

export function reclaimPolicy(value: unknown, causes: Causes): ReclaimPolicy {
  const policy = SCHEMAS.ReclaimPolicy;
  if (value === undefined) return policy.default;
  const known = policy.enum.find((entry) => entry === value);
  if (known) return known;
  causes.add('spec.reclaimPolicy', `must be ${policy.enum.join(' or ')}`);
  return policy.default;
}
