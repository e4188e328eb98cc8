/**
 * Two AWS APIs on the local server's port, answered as AWS answers them (signatures are not checked),
 * so AWS's own clients work against `npm start` (`aws lambda invoke --endpoint-url …`, `aws events
 * put-events --endpoint-url …`, the SDK's LambdaClient and EventBridgeClient):
 *
 * - Lambda's `Invoke` (`POST /2015-03-31/functions/{name}/invocations`, the name or an ARN ending in
 *   `:function:{name}`) for the functions the deployed stack has invoked directly
 *   (`DIRECT_FUNCTIONS`, lib/cloud/requests.ts), `RequestResponse`, `Event` or `DryRun`;
 * - EventBridge's `PutEvents` (`POST /`, `X-Amz-Target: AWSEvents.PutEvents`), whose events on the local
 *   bus (`LOCAL_EVENT_BUS`) reach the functions by the deployed bus's rules (`REQUEST_RULES`), delivered
 *   asynchronously as EventBridge delivers them.
 *
 * Errors are those APIs' own: Lambda's `{ Type, message }` body with its code in `x-amzn-ErrorType`
 * (`ResourceNotFoundException`, `InvalidRequestContentException`, …), EventBridge's JSON 1.1
 * `{ __type, message }` (`ValidationException`, `SerializationException`, `UnknownOperationException`)
 * and its per-entry `ErrorCode`s (`InvalidArgument`, `MalformedDetail`). Never a 5xx of ours.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DIRECT_FUNCTIONS, rulesMatching, type DirectFunctionName } from '../cloud/requests.ts';
import { timestamp } from '../domain/objects/objects.ts';

/** Runs one of the functions with an event, as Lambda would (its result, or it throws). */
export type Invoke = (name: DirectFunctionName, event: unknown) => Promise<unknown>;

/** The local event bus: the one the deployed stack's rules are on (events to any other bus go nowhere). */
export const LOCAL_EVENT_BUS = 'allot';
const ACCOUNT = '000000000000';
const LAMBDA_PREFIX = '/2015-03-31/functions/';
/** Lambda's synchronous payload limit; PutEvents' request limit is below it. */
const MAX_BODY_BYTES = 6 * 1024 * 1024;
const PUT_EVENTS_MAX_ENTRIES = 10;

export interface AwsApis {
  /** Whether the request is for one of these APIs (then `serve` answers it). */
  handles(request: IncomingMessage): boolean;
  serve(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /**
   * Waits for the asynchronous invocations under way (`Event` invokes and rule deliveries), at most
   * `withinMs`: a server stopping does not wait longer (what a cut invocation did not do is what a
   * Lambda cut off leaves: its caller retries, or the stream's repair finishes it).
   */
  settle(withinMs?: number): Promise<void>;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The Region a SigV4-signed request names (`Credential=…/<date>/<region>/<service>/aws4_request`). */
function regionOf(request: IncomingMessage): string {
  return /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(request.headers.authorization ?? '')?.[1] ?? 'local';
}

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  return size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks);
}

function send(response: ServerResponse, answer: Answer): void {
  response.writeHead(answer.status, {
    'x-amzn-requestid': randomUUID(),
    'content-length': String(Buffer.byteLength(answer.body)),
    ...answer.headers,
  });
  response.end(answer.body);
}

/** How the handlers reach the functions: directly, or in the background (the log says what failed there). */
interface Runtime {
  invoke: Invoke;
  inBackground: (what: string, run: () => Promise<unknown>) => void;
  log: (message: string) => void;
}

// ---------------------------------------------------------------- Lambda

/** Lambda's error: `{ Type, message }`, its code in `x-amzn-ErrorType` (where the SDKs read it). */
function lambdaError(status: number, code: string, message: string): Answer {
  return {
    status,
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': code },
    body: JSON.stringify({ Type: 'User', message }),
  };
}

/** `claim`, `…:function:claim` or `…:function:claim:$LATEST`, with the Qualifier query parameter. */
function functionOf(raw: string, qualifier: string | null): DirectFunctionName | undefined {
  const match = /^(?:(?:arn:[^:]+:lambda:[^:]*:)?\d{12}:function:)?([A-Za-z0-9_-]+)(?::([^:]+))?$/.exec(raw);
  if (!match) return undefined;
  const version = match[2] ?? qualifier ?? '$LATEST';
  if (version !== '$LATEST') return undefined;
  return (DIRECT_FUNCTIONS as readonly string[]).includes(match[1]!)
    ? (match[1] as DirectFunctionName)
    : undefined;
}

/** An unhandled error as Lambda reports it: 200, `X-Amz-Function-Error: Unhandled`, the error as payload. */
function functionError(error: unknown): Answer {
  const failure = error instanceof Error ? error : new Error(String(error));
  return {
    status: 200,
    headers: {
      'content-type': 'application/json',
      'x-amz-function-error': 'Unhandled',
      'x-amz-executed-version': '$LATEST',
    },
    body: JSON.stringify({
      errorType: failure.name,
      errorMessage: failure.message,
      trace: (failure.stack ?? '').split('\n'),
    }),
  };
}

/** The invocation's event: the payload's JSON, `{}` when there is none; a bad payload is Lambda's 400. */
function payloadOf(body: Buffer): { event: unknown } | Answer {
  const text = body.toString('utf8');
  if (text.trim() === '') return { event: {} };
  try {
    return { event: JSON.parse(text) };
  } catch (error) {
    return lambdaError(
      400,
      'InvalidRequestContentException',
      `Could not parse request body into json: Could not parse payload into json: ${(error as Error).message}`,
    );
  }
}

async function lambdaInvoke(
  runtime: Runtime,
  request: IncomingMessage,
  url: URL,
  body: Buffer,
): Promise<Answer> {
  const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations\/?$/.exec(url.pathname);
  if (!match || request.method !== 'POST')
    return lambdaError(
      404,
      'UnknownOperationException',
      `${request.method} ${url.pathname} is not an operation served here`,
    );
  const raw = decodeURIComponent(match[1]!);
  const name = functionOf(raw, url.searchParams.get('Qualifier'));
  if (!name)
    return lambdaError(
      404,
      'ResourceNotFoundException',
      `Function not found: ${raw.startsWith('arn:') ? raw : `arn:aws:lambda:${regionOf(request)}:${ACCOUNT}:function:${raw}`}`,
    );
  const invocationType = String(request.headers['x-amz-invocation-type'] ?? 'RequestResponse');
  if (!['RequestResponse', 'Event', 'DryRun'].includes(invocationType))
    return lambdaError(
      400,
      'InvalidParameterValueException',
      `1 validation error detected: Value '${invocationType}' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [Event, RequestResponse, DryRun]`,
    );
  const payload = payloadOf(body);
  if (!('event' in payload)) return payload;
  const { event } = payload;
  if (invocationType === 'DryRun') return { status: 204, headers: {}, body: '' };
  if (invocationType === 'Event') {
    runtime.inBackground(`asynchronous invocation of ${name}`, () => runtime.invoke(name, event));
    return { status: 202, headers: {}, body: '' };
  }
  try {
    const result = await runtime.invoke(name, event);
    return {
      status: 200,
      headers: { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' },
      body: JSON.stringify(result ?? null),
    };
  } catch (error) {
    return functionError(error);
  }
}

// ---------------------------------------------------------------- EventBridge

function eventsError(code: string, message: string): Answer {
  return {
    status: 400,
    headers: { 'content-type': 'application/x-amz-json-1.1' },
    body: JSON.stringify({ __type: code, message }),
  };
}

type EntryResult = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

/** An event as EventBridge delivers it to a rule's target. */
type BusEvent = {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: unknown[];
  detail: Record<string, unknown>;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The bus an entry names: absent is the account's default bus, a name, or an ARN ending `event-bus/<name>`. */
const busOf = (name: unknown) =>
  typeof name === 'string' && name !== ''
    ? name.replace(/^arn:[^:]+:events:[^:]*:\d{12}:event-bus\//, '')
    : 'default';

/** The event EventBridge would deliver for an entry, or the entry's own error. */
function eventOf(entry: unknown, region: string): { bus: string; event: BusEvent } | EntryResult {
  if (!isRecord(entry))
    return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Parameter Entry is not valid.' };
  const missing = ['Source', 'DetailType', 'Detail'].filter(
    (field) => typeof entry[field] !== 'string' || entry[field] === '',
  );
  if (missing.length > 0)
    return {
      ErrorCode: 'InvalidArgument',
      ErrorMessage: `Parameter(s) ${missing.join(', ')} not specified or not valid.`,
    };
  let detail: unknown;
  try {
    detail = JSON.parse(entry.Detail as string);
  } catch {
    detail = undefined;
  }
  if (!isRecord(detail)) return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
  // The AWS CLI and SDKs send a timestamp as epoch seconds; absent, it is the time of the call.
  const time = new Date(
    typeof entry.Time === 'number'
      ? entry.Time * 1000
      : typeof entry.Time === 'string'
        ? entry.Time
        : Date.now(),
  );
  if (Number.isNaN(time.getTime()))
    return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Parameter Time is not valid.' };
  return {
    bus: busOf(entry.EventBusName),
    event: {
      version: '0',
      id: randomUUID(),
      'detail-type': entry.DetailType as string,
      source: entry.Source as string,
      account: ACCOUNT,
      time: timestamp(time.getTime()),
      region,
      resources: Array.isArray(entry.Resources) ? entry.Resources : [],
      detail,
    },
  };
}

/** Puts one entry: its event goes, in the background, to each function whose rule it matches. */
function putEntry(runtime: Runtime, entry: unknown, region: string): EntryResult {
  const made = eventOf(entry, region);
  if (!('event' in made)) return made;
  const { bus, event } = made;
  const { id } = event;
  // EventBridge accepts an event for any bus, and one whose bus has no matching rule goes nowhere.
  if (bus !== LOCAL_EVENT_BUS) {
    runtime.log(
      `PutEvents: an event for bus "${bus}" matches no rule here (the local bus is "${LOCAL_EVENT_BUS}")`,
    );
    return { EventId: id };
  }
  for (const rule of rulesMatching(event))
    runtime.inBackground(`${event['detail-type']} ${id} to the ${rule.target} function`, () =>
      runtime.invoke(rule.target, event),
    );
  return { EventId: id };
}

function putEvents(runtime: Runtime, request: IncomingMessage, body: Buffer): Answer {
  let input: unknown;
  try {
    input = JSON.parse(body.toString('utf8') || '{}');
  } catch {
    return eventsError('SerializationException', 'Start of structure or map found where not expected');
  }
  const entries = isRecord(input) ? input.Entries : undefined;
  if (!Array.isArray(entries))
    return eventsError(
      'ValidationException',
      "1 validation error detected: Value null at 'entries' failed to satisfy constraint: Member must not be null",
    );
  if (entries.length < 1 || entries.length > PUT_EVENTS_MAX_ENTRIES)
    return eventsError(
      'ValidationException',
      `1 validation error detected: Value '[…]' at 'entries' failed to satisfy constraint: Member must have length ${entries.length < 1 ? 'greater than or equal to 1' : `less than or equal to ${PUT_EVENTS_MAX_ENTRIES}`}`,
    );
  const region = regionOf(request);
  const results = entries.map((entry) => putEntry(runtime, entry, region));
  return {
    status: 200,
    headers: { 'content-type': 'application/x-amz-json-1.1' },
    body: JSON.stringify({
      FailedEntryCount: results.filter((result) => 'ErrorCode' in result).length,
      Entries: results,
    }),
  };
}

// ---------------------------------------------------------------- Both

/** The answer to a request for either API; a body over the limit is refused as each API refuses it. */
async function answer(runtime: Runtime, request: IncomingMessage, url: URL): Promise<Answer> {
  const lambda = url.pathname.startsWith(LAMBDA_PREFIX);
  const body = await readBody(request);
  if (!body)
    return lambda
      ? lambdaError(
          413,
          'RequestTooLargeException',
          'Request must be smaller than 6291456 bytes for the InvokeFunction operation',
        )
      : eventsError('ValidationException', 'Total size of the entries in the request is over the limit.');
  if (lambda) return lambdaInvoke(runtime, request, url, body);
  if (request.method !== 'POST' || request.headers['x-amz-target'] !== 'AWSEvents.PutEvents')
    return eventsError(
      'UnknownOperationException',
      `${String(request.headers['x-amz-target'])} is not an operation served here`,
    );
  return putEvents(runtime, request, body);
}

export function createAwsApis(invoke: Invoke, log: (message: string) => void = console.error): AwsApis {
  const underWay = new Set<Promise<unknown>>();
  /** Runs an invocation in the background, as Lambda's asynchronous invocations run. */
  const inBackground = (what: string, run: () => Promise<unknown>) => {
    const running = run().then(
      () => undefined,
      (error) => log(`${what} failed: ${error instanceof Error ? error.message : String(error)}`),
    );
    underWay.add(running);
    void running.finally(() => underWay.delete(running));
  };
  const runtime: Runtime = { invoke, inBackground, log };

  return {
    handles(request) {
      const path = (request.url ?? '/').split('?')[0]!;
      return (
        path.startsWith(LAMBDA_PREFIX) || (path === '/' && request.headers['x-amz-target'] !== undefined)
      );
    },

    async serve(request, response) {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      let answered: Answer;
      try {
        answered = await answer(runtime, request, url);
      } catch (error) {
        // Ours, not the caller's: as AWS reports its own failures (a 500 would be its ServiceException).
        log(`AWS API request failed: ${error instanceof Error ? error.stack : String(error)}`);
        answered = lambdaError(500, 'ServiceException', 'the local server failed to handle the request');
      }
      send(response, answered);
    },

    async settle(withinMs = 2_000) {
      const deadline = Date.now() + withinMs;
      while (underWay.size > 0 && Date.now() < deadline) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...underWay]),
          new Promise((resolve) => (timer = setTimeout(resolve, deadline - Date.now()))),
        ]);
        clearTimeout(timer);
      }
    },
  };
}
