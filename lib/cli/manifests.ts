/**
 * Manifests as `allot apply` reads them: YAML (several documents separated by `---`), JSON (one object,
 * an array, or a `{ "items": [...] }` list), each document an object of one of the API's kinds.
 */
import { parseAllDocuments } from 'yaml';
import { API_VERSION, RESOURCES, kindOfResource, type ObjectKind, type Resource } from '../domain/kinds.ts';
import { CliError } from './http.ts';

export interface Manifest {
  kind: ObjectKind;
  resource: Resource;
  name: string;
  namespace?: string;
  body: Record<string, any>;
  /** Where it came from, for messages: `file.yaml #2`. */
  source: string;
}

const KINDS = new Map(RESOURCES.map((resource) => [kindOfResource(resource) as string, resource]));

export function parseManifests(text: string, file: string): Manifest[] {
  const documents: unknown[] = [];
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      throw new CliError(`${file}: not valid JSON: ${(error as Error).message}`);
    }
    documents.push(...flatten(value));
  } else {
    for (const document of parseAllDocuments(text, { intAsBigInt: false })) {
      if ('errors' in document && document.errors.length > 0) {
        throw new CliError(`${file}: not valid YAML: ${document.errors[0]!.message.split('\n')[0]}`);
      }
      const value = document.toJS();
      if (value !== null && value !== undefined) documents.push(...flatten(value));
    }
  }
  return documents.map((document, i) => toManifest(document, `${file} #${i + 1}`));
}

function flatten(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  // A list, as `allot get … -o yaml|json` prints one (kind List), so its output applies back.
  if (isRecord(value) && Array.isArray(value.items) && (value.kind === undefined || value.kind === 'List'))
    return value.items;
  return [value];
}

function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toManifest(document: unknown, source: string): Manifest {
  if (!isRecord(document)) throw new CliError(`${source}: a manifest must be an object`);
  const kind = document.kind;
  const resource = typeof kind === 'string' ? KINDS.get(kind) : undefined;
  if (!resource) {
    throw new CliError(
      `${source}: kind ${JSON.stringify(kind)} is not one of ${[...KINDS.keys()].join(', ')}`,
    );
  }
  if (document.apiVersion !== undefined && document.apiVersion !== API_VERSION) {
    throw new CliError(`${source}: apiVersion must be ${API_VERSION}`);
  }
  const name = document.metadata?.name;
  if (typeof name !== 'string' || name === '') throw new CliError(`${source}: metadata.name is required`);
  const namespace = document.metadata?.namespace;
  return {
    kind: kind as ObjectKind,
    resource,
    name,
    namespace: typeof namespace === 'string' ? namespace : undefined,
    body: document,
    source,
  };
}
