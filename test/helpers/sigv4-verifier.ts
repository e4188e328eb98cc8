/**
 * A stand-in for API Gateway's IAM authorization (or, given `service`, another AWS endpoint's, such as
 * DynamoDB's for a Lambda bundle's calls): it checks each request's SigV4 signature by signing
 * the request again with @smithy/signature-v4 and the one secret it knows, and answers 403 when they
 * differ. Verified requests are answered by `answer` (by default an echo of what arrived), or forwarded
 * to `forwardTo` (a local Allot), as the deployed API would serve them.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';

export const VERIFIER_REGION = 'eu-west-1';
export const VERIFIER_CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token-example',
};

/** node:crypto behind the hash interface the signer takes (written here, apart from the code under test). */
class Sha256 {
  private hash;
  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

export interface Arrival {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface Verifier {
  url: string;
  verified: Arrival[];
  rejected: { arrival: Arrival; problem: string }[];
  close(): Promise<void>;
}

/** Why a request's signature does not hold, or undefined when it does. */
async function problemWith(
  request: IncomingMessage,
  body: string,
  signedFor: string,
): Promise<string | undefined> {
  const authorization = request.headers.authorization;
  const parts = typeof authorization === 'string' ? AUTHORIZATION.exec(authorization) : null;
  if (!parts) return `no SigV4 authorization header: ${String(authorization)}`;
  const [, keyId, day, region, service, signedList] = parts;
  if (keyId !== VERIFIER_CREDENTIALS.accessKeyId) return `unknown access key ${keyId}`;
  if (region !== VERIFIER_REGION || service !== signedFor) return `signed for ${region}/${service}`;
  const stamp = String(request.headers['x-amz-date'] ?? '');
  const date = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(stamp);
  if (!date || stamp.slice(0, 8) !== day) return `x-amz-date ${stamp} does not match the credential scope`;
  const signingDate = new Date(`${date[1]}-${date[2]}-${date[3]}T${date[4]}:${date[5]}:${date[6]}Z`);
  const signed = signedList!.split(';');
  if (!signed.includes('host')) return 'the host header is not signed';
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = request.headers[name];
    if (value === undefined) return `signed header ${name} is missing`;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const url = new URL(request.url ?? '/', `http://${request.headers.host}`);
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = value;
  const signer = new SignatureV4({
    service: signedFor,
    region,
    credentials: VERIFIER_CREDENTIALS,
    sha256: Sha256,
  });
  const again = await signer.sign(
    {
      method: request.method ?? 'GET',
      protocol: 'http:',
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers,
      body: body.length > 0 ? body : undefined,
    },
    { signingDate },
  );
  return again.headers.authorization === authorization ? undefined : 'the signature does not match';
}

export async function startVerifier(
  options: {
    forwardTo?: string;
    answer?: (arrival: Arrival) => { status: number; body: unknown };
    /** The service the signatures must be for: API Gateway's unless told (`dynamodb` for a table). */
    service?: string;
  } = {},
): Promise<Verifier> {
  const verified: Arrival[] = [];
  const rejected: Verifier['rejected'] = [];
  const server: Server = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const arrival = {
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        headers: request.headers,
        body,
      };
      const problem = await problemWith(request, body, options.service ?? 'execute-api');
      if (problem) {
        rejected.push({ arrival, problem });
        response.writeHead(403, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: `Forbidden: ${problem}` }));
        return;
      }
      verified.push(arrival);
      if (options.forwardTo) {
        const upstream = await fetch(`${options.forwardTo}${arrival.path}`, {
          method: arrival.method,
          headers: { 'content-type': String(request.headers['content-type'] ?? 'application/json') },
          body: body.length > 0 ? body : undefined,
        });
        response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? '' });
        response.end(await upstream.text());
        return;
      }
      const reply = options.answer?.(arrival) ?? { status: 200, body: { echo: arrival.path, body } };
      response.writeHead(reply.status, {
        'content-type': 'application/json',
        'x-internal': 'not for clients',
      });
      response.end(JSON.stringify(reply.body));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    verified,
    rejected,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
