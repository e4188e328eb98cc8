/**
 * What a list or a watch selects (api.md, "Routes"): Kubernetes' `labelSelector` (label-selector.ts) and
 * `fieldSelector` on the fields served per resource, parsed as apimachinery parses them
 * (pkg/fields/selector.go: comma-separated `field=value`, `field==value`, `field!=value`, values escaped
 * with `\`), and matched against stored records. Pure.
 */
import { poolInfoByAllocationResource, type Resource } from '../kinds.ts';
import { parseLabelSelector, labelsMatch, type LabelSelector, type Parsed } from './label-selector.ts';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export interface Selection {
  readonly labels: LabelSelector;
  readonly fields: readonly FieldRequirement[];
}

export const SELECT_ALL: Selection = { labels: [], fields: [] };

/** The fields a resource's lists and watches select on. */
export function selectableFields(resource: Resource): readonly string[] {
  const common = ['metadata.name', 'metadata.namespace'];
  if (resource === 'claims') return [...common, 'spec.poolRef.name', 'status.phase'];
  if (poolInfoByAllocationResource(resource)) return [...common, 'spec.poolRef.name'];
  return common;
}

/** Terms split at unescaped commas, each kept with its backslashes (apimachinery's splitTerms). */
function splitTerms(selector: string): string[] {
  if (selector.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

const OPERATORS = ['!=', '==', '='] as const;

/** The first operator in a term splits it; the field part has no escaping (apimachinery's splitTerm). */
function splitTerm(
  term: string,
): { field: string; operator: (typeof OPERATORS)[number]; rest: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const operator of OPERATORS)
      if (term.startsWith(operator, i))
        return { field: term.slice(0, i), operator, rest: term.slice(i + operator.length) };
  }
  return undefined;
}

function unescapeValue(text: string): Parsed<string> {
  if (!/[\\,=]/.test(text)) return { ok: true, value: text };
  let value = '';
  let escaped = false;
  for (const c of text) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=')
        return { ok: false, problem: `invalid field selector: invalid escape sequence: \\${c}` };
      value += c;
      escaped = false;
    } else if (c === '\\') escaped = true;
    else if (c === ',' || c === '=')
      return {
        ok: false,
        problem: `invalid field selector: unescaped character in value: ${c.codePointAt(0)}`,
      };
    else value += c;
  }
  if (escaped) return { ok: false, problem: 'invalid field selector: invalid escape sequence: \\' };
  return { ok: true, value };
}

/** Parses a field selector and checks its fields are served for `resource`. */
export function parseFieldSelector(text: string, resource: Resource): Parsed<FieldRequirement[]> {
  const requirements: FieldRequirement[] = [];
  const served = selectableFields(resource);
  for (const term of splitTerms(text).sort()) {
    if (term === '') continue;
    const split = splitTerm(term);
    if (!split) return { ok: false, problem: `invalid selector: '${text}'; can't understand '${term}'` };
    const value = unescapeValue(split.rest);
    if (!value.ok) return value;
    if (!served.includes(split.field))
      return {
        ok: false,
        problem: `field label not supported: ${split.field}; the fields served are ${served.join(', ')}`,
      };
    requirements.push({
      field: split.field,
      operator: split.operator === '!=' ? '!=' : '=',
      value: value.value,
    });
  }
  return { ok: true, value: requirements };
}

/** The selection a query asks for: its `labelSelector` and `fieldSelector`, or what is wrong with them. */
export function selectionOf(
  resource: Resource,
  query: { labelSelector?: string; fieldSelector?: string },
): Parsed<Selection> {
  const labels = parseLabelSelector(query.labelSelector ?? '');
  if (!labels.ok) return { ok: false, problem: labels.problem };
  const fields = parseFieldSelector(query.fieldSelector ?? '', resource);
  if (!fields.ok) return fields;
  return { ok: true, value: { labels: labels.value, fields: fields.value } };
}

/** The stored record of a pool, claim or allocation object, as far as selection reads it. */
export interface SelectableRecord {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec?: object;
  phase?: string;
}

function fieldValue(record: SelectableRecord, field: string): string {
  switch (field) {
    case 'metadata.name':
      return record.metadata.name;
    case 'metadata.namespace':
      return record.metadata.namespace;
    case 'spec.poolRef.name':
      return (record.spec as { poolRef?: { name?: unknown } } | undefined)?.poolRef?.name === undefined
        ? ''
        : String((record.spec as { poolRef: { name: unknown } }).poolRef.name);
    case 'status.phase':
      return record.phase ?? '';
    default:
      return '';
  }
}

export function selects(selection: Selection, record: SelectableRecord): boolean {
  return (
    selection.fields.every(
      (req) => (fieldValue(record, req.field) === req.value) === (req.operator === '='),
    ) && labelsMatch(selection.labels, record.metadata.labels ?? {})
  );
}

export function selectsAll(selection: Selection): boolean {
  return selection.labels.length === 0 && selection.fields.length === 0;
}

/** The one value `field` must equal under this selection, if it names one (a read by key, not a filter). */
export function requiredField(selection: Selection, field: string): string | undefined {
  const equal = selection.fields.filter((req) => req.field === field && req.operator === '=');
  return equal[0]?.value;
}
