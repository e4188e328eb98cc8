/** The events' JSON Schemas (schemas/events/), compiled once with ajv, by detail type. */
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { DETAIL_TYPES, type DetailType } from '../../lib/domain/events.ts';

const folder = new URL('../../schemas/events/', import.meta.url);
const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
ajv.addKeyword('x-detail-type');

export const validators = new Map<string, ValidateFunction>();
for (const file of readdirSync(folder)) {
  const schema = JSON.parse(readFileSync(new URL(file, folder), 'utf8'));
  validators.set(schema['x-detail-type'], ajv.compile(schema));
}

/** Fails with ajv's own words when `detail` does not match its detail type's schema. */
export function expectValid(detailType: string, detail: unknown): void {
  const validate = validators.get(detailType);
  if (!validate) throw new Error(`no schema for detail-type ${detailType}`);
  if (!validate(detail))
    throw new Error(
      `${detailType} does not match its schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(detail)}`,
    );
}

export const SCHEMA_DETAIL_TYPES: readonly DetailType[] = DETAIL_TYPES;
