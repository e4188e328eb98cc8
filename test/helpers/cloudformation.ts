/**
 * CloudFormation's side of a custom resource, for tests: the requests it sends (as in the User Guide's
 * "Custom resource request types") and a local listener in place of the presigned S3 `ResponseURL`,
 * which records every response PUT to it, as S3 would store it for CloudFormation to read.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ResponseSeen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
}

export interface ResponseListener {
  /** A fresh presigned-URL stand-in: one path per request, as CloudFormation makes one per request. */
  url(): string;
  /** The responses PUT so far, by URL path. */
  readonly seen: ResponseSeen[];
  /** The response PUT to `url`, waiting for it (at most `timeoutMs`). */
  responseTo(url: string, timeoutMs?: number): Promise<ResponseSeen>;
  close(): Promise<void>;
}

export async function startResponseListener(): Promise<ResponseListener> {
  const seen: ResponseSeen[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body: Record<string, any>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = { unparsable: Buffer.concat(chunks).toString('utf8') };
      }
      seen.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      for (const wake of waiters.splice(0)) wake();
      response.writeHead(200);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    seen,
    url: () => `${base}/cloudformation-custom-resource-response/${randomUUID()}?X-Amz-Signature=test`,
    async responseTo(url, timeoutMs = 20_000) {
      const path = url.slice(base.length);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = seen.find((response) => response.path === path);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no response was PUT to ${path}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const STACK_ID =
  'arn:aws:cloudformation:eu-west-1:111111111111:stack/Networking/5b918d10-cd98-11ea-90d5-0a9cd3354c10';
export const OTHER_STACK_ID =
  'arn:aws:cloudformation:eu-west-1:222222222222:stack/Networking/77c1e6a0-0b51-11ef-9d2f-06b1c4f3a7e1';

export interface RequestOptions {
  stackId?: string;
  logicalId?: string;
  physicalId?: string;
  properties?: Record<string, unknown>;
  oldProperties?: Record<string, unknown>;
  responseUrl: string;
  requestId?: string;
}

/** A request as CloudFormation sends it to the provider (every scalar property a string, as it does). */
export function cloudFormationRequest(type: 'Create' | 'Update' | 'Delete', options: RequestOptions) {
  return {
    RequestType: type,
    ServiceToken: 'arn:aws:lambda:eu-west-1:111111111111:function:claim-resource',
    ResponseURL: options.responseUrl,
    StackId: options.stackId ?? STACK_ID,
    RequestId: options.requestId ?? randomUUID(),
    ResourceType: 'Custom::AllotClaim',
    LogicalResourceId: options.logicalId ?? 'VpcAllotCidr1A2B3C4D',
    ...(options.physicalId !== undefined ? { PhysicalResourceId: options.physicalId } : {}),
    ResourceProperties: {
      ServiceToken: 'arn:aws:lambda:eu-west-1:111111111111:function:claim-resource',
      ...stringified(options.properties ?? {}),
    },
    ...(options.oldProperties
      ? {
          OldResourceProperties: {
            ServiceToken: 'arn:aws:lambda:eu-west-1:111111111111:function:claim-resource',
            ...stringified(options.oldProperties),
          },
        }
      : {}),
  };
}

/** CloudFormation's rendering of properties: numbers and booleans become strings, nested too. */
export function stringified<T>(value: T): T {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value) as T;
  if (Array.isArray(value)) return value.map(stringified) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, stringified(item)])) as T;
  return value;
}
