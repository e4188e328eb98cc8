/** The OpenAPI schema of the repair sweep's answer (`POST /v1/namespaces/{namespace}/repair`). */
import { REPAIR_KINDS } from '../../service/repair/state.ts';

import type { Schema } from '../../domain/objects/schemas.ts';

const schemaRef = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

const repairCounts: Schema = {
  type: 'object',
  description: 'per kind of fix (docs/recovery.md, "The repair sweep")',
  properties: Object.fromEntries(REPAIR_KINDS.map((kind) => [kind, { type: 'integer', minimum: 0 }])),
  required: [...REPAIR_KINDS],
  additionalProperties: false,
};

export const REPAIR_REPORT_SCHEMA: Schema = {
  type: 'object',
  required: ['kind', 'namespace', 'dryRun', 'complete', 'requests', 'found', 'fixed'],
  properties: {
    kind: { const: 'RepairReport' },
    namespace: schemaRef('Name'),
    dryRun: { type: 'boolean' },
    complete: { type: 'boolean', description: 'false: the budget of the run ran out; the next run goes on' },
    requests: { type: 'integer', minimum: 0, description: 'DynamoDB requests the run made' },
    found: repairCounts,
    fixed: repairCounts,
  },
  additionalProperties: false,
};

export const REPAIR_RESPONSE = {
  description:
    'what one run of the repair sweep found and fixed, by kind; complete false: run again to go on',
  content: { 'application/json': { schema: schemaRef('RepairReport') } },
};

export const REPAIR_DRY_RUN = {
  name: 'dryRun',
  in: 'query',
  schema: { type: 'boolean', default: false },
  description: 'only count what is wrong; change nothing',
};
