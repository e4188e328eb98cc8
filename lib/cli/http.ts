/**
 * The CLI's HTTP client: the local server as is, a deployed API (https) with every request signed
 * with SigV4 for `execute-api` from the standard AWS credential chain (environment, profile, SSO,
 * container or instance role), as the API's IAM authorization requires.
 */
import { createHash, createHmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';

export const LOCAL_ENDPOINT = 'http://127.0.0.1:8080';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type CredentialProvider = () => Promise<Credentials>;

export interface Answer {
  status: number;
  body: any;
}

/** What the signer hashes with; node:crypto behind the interface @smithy/signature-v4 expects. */
class Sha256 {
  private hash;
  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(this.secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBuffer(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

function toBuffer(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** The region of an `https://<id>.execute-api.<region>.amazonaws.com` URL, if it is one. */
export function regionOfEndpoint(endpoint: string): string | undefined {
  return /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/.exec(new URL(endpoint).hostname)?.[1];
}

/**
 * Signs a request for API Gateway (service `execute-api`) and returns the headers to send. The body
 * is part of the signature, so it is signed exactly as it will be sent.
 */
export async function signedHeaders(
  request: { method: string; url: URL; headers: Record<string, string>; body?: string },
  options: { region: string; credentials: CredentialProvider; date?: Date },
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: 'execute-api',
    region: options.region,
    credentials: options.credentials,
    sha256: Sha256,
  });
  const { url } = request;
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = value;
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host },
      body: request.body,
    },
    { signingDate: options.date },
  );
  return signed.headers as Record<string, string>;
}

export interface ClientOptions {
  endpoint: string;
  /** Whether to sign: by default, when the endpoint is https (a deployed API). */
  sign?: boolean;
  region?: string;
  credentials?: CredentialProvider;
}

export class ApiClient {
  readonly endpoint: string;
  private readonly sign: boolean;
  private readonly region: string | undefined;
  private readonly credentials: CredentialProvider;

  constructor(options: ClientOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, '');
    this.sign = options.sign ?? new URL(this.endpoint).protocol === 'https:';
    this.region = options.region;
    this.credentials = options.credentials ?? defaultProvider();
  }

  /** Calls `path` (under the endpoint) and reads the JSON answer. */
  async call(method: string, path: string, body?: unknown): Promise<Answer> {
    const url = new URL(`${this.endpoint}${path}`);
    const text = body === undefined ? undefined : JSON.stringify(body);
    let headers: Record<string, string> = { accept: 'application/json' };
    if (text !== undefined) headers['content-type'] = 'application/json';
    if (this.sign) {
      if (!this.region) {
        throw new CliError(`cannot tell the region of ${this.endpoint}; pass --region or set AWS_REGION`);
      }
      try {
        headers = await signedHeaders(
          { method, url, headers, body: text },
          { region: this.region, credentials: this.credentials },
        );
      } catch (error) {
        throw new CliError(`cannot sign the request for ${this.endpoint}: ${(error as Error).message}`);
      }
      // fetch sets Host itself; sending it twice is refused.
      delete headers.host;
    }
    let response: Response;
    try {
      response = await fetch(url, { method, headers, body: text });
    } catch (error) {
      const local = this.endpoint === LOCAL_ENDPOINT ? ' (is `npm start` running?)' : '';
      throw new CliError(`cannot reach ${this.endpoint}${local}: ${(error as Error).cause ?? error}`);
    }
    const raw = await response.text();
    let parsed: unknown = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // not JSON: shown as text in the error
    }
    return { status: response.status, body: parsed };
  }
}

/** An error the CLI reports as it is, with no stack. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly lines: string[] = [],
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
