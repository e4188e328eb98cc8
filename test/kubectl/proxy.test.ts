/**
 * The signing proxy (`allot proxy`; the console's `allot ui` serves through the same module): every call
 * reaches the API signed. The API here is a stand-in that verifies SigV4 as API Gateway's IAM
 * authorization does, by signing the request it received again with @smithy/signature-v4 and the
 * caller's secret and comparing, and then passes it to a local Allot. kubectl goes through it too.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { startSigningProxy, type SigningProxy } from '../../lib/cli/proxy.ts';
import { run } from '../../lib/cli/main.ts';
import { haveKubectl, kubectlFor } from '../kubectl/support.ts';

const REGION = 'eu-west-1';
const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

type Data = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: Data) =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** The verifier's own hash, on node:crypto (not the CLI's: the check must not share the signer's code). */
class Sha256 {
  private hash;
  constructor(private readonly secret?: Data) {
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
  update(data: Data): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

/** Why a request's signature does not verify, or undefined when it does. */
async function signatureProblem(request: IncomingMessage, body: string): Promise<string | undefined> {
  const authorization = request.headers.authorization ?? '';
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=[0-9a-f]{64}$/.exec(
      authorization,
    );
  if (!match) return 'no SigV4 Authorization header';
  const [, accessKeyId, , region, service, signedList] = match;
  if (accessKeyId !== KEYS.accessKeyId || region !== REGION || service !== 'execute-api')
    return `signed for ${accessKeyId} ${region} ${service}`;
  const date = String(request.headers['x-amz-date'] ?? '');
  const signingDate = new Date(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  const headers: Record<string, string> = {};
  for (const name of signedList!.split(';')) headers[name] = String(request.headers[name] ?? '');
  const url = new URL(request.url ?? '/', `http://${request.headers.host}`);
  const signer = new SignatureV4({
    service: 'execute-api',
    region: REGION,
    credentials: KEYS,
    sha256: Sha256,
  });
  const again = await signer.sign(
    {
      method: request.method ?? 'GET',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body: body.length > 0 ? body : undefined,
    },
    { signingDate },
  );
  return again.headers.authorization === authorization ? undefined : 'the signature does not match';
}

/** An IAM-only API: verifies each request's signature (403 otherwise), then passes it to Allot. */
async function startVerifyingApi(
  target: string,
): Promise<{ url: string; server: Server; verified: string[] }> {
  const verified: string[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const problem = await signatureProblem(request, body);
      if (problem) {
        response.writeHead(403, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: `Forbidden: ${problem}` }));
        return;
      }
      verified.push(`${request.method} ${request.url}`);
      const headers: Record<string, string> = {};
      for (const name of ['accept', 'content-type'])
        if (typeof request.headers[name] === 'string') headers[name] = request.headers[name] as string;
      const answer = await fetch(`${target}${request.url}`, {
        method: request.method,
        headers,
        body: body.length > 0 ? body : undefined,
      });
      response.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'text/plain',
      });
      response.end(Buffer.from(await answer.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, verified };
}

let allot: LocalAllot;
let api: Awaited<ReturnType<typeof startVerifyingApi>>;
let proxy: SigningProxy;

beforeAll(async () => {
  allot = await startTestAllot();
  api = await startVerifyingApi(allot.url);
  proxy = await startSigningProxy({
    endpoint: api.url,
    port: 0,
    region: REGION,
    credentials: async () => KEYS,
    sign: true,
  });
});
afterAll(async () => {
  await proxy?.close();
  await new Promise((resolve) => api?.server.close(resolve));
  await allot?.close();
});

describe('the signing proxy', () => {
  it('serves on 127.0.0.1, and only requests that name it (no DNS rebinding)', async () => {
    expect(new URL(proxy.url).hostname).toBe('127.0.0.1');
    const withHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const { port } = new URL(proxy.url);
        request({ host: '127.0.0.1', port, path: '/v1/healthz', headers: { host } }, (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
    expect(await withHost('attacker.example:8001')).toBe(403);
    expect(await withHost(`localhost:${new URL(proxy.url).port}`)).toBe(200);
    expect(await withHost(new URL(proxy.url).host)).toBe(200);
  });

  it('is needed: the stand-in refuses an unsigned call and one signed with another secret', async () => {
    const unsigned = await fetch(`${api.url}/v1/healthz`);
    expect(unsigned.status).toBe(403);
    const wrong = await startSigningProxy({
      endpoint: api.url,
      port: 0,
      region: REGION,
      credentials: async () => ({ ...KEYS, secretAccessKey: 'not-the-secret' }),
      sign: true,
    });
    try {
      const answer = await fetch(`${wrong.url}/v1/healthz`);
      expect(answer.status).toBe(403);
      expect(await answer.json()).toEqual({ message: 'Forbidden: the signature does not match' });
    } finally {
      await wrong.close();
    }
  });

  it('signs reads, writes with a body, queries and deletes, and passes the answers back', async () => {
    const base = `${proxy.url}/v1/namespaces/signed`;
    const before = api.verified.length;
    const created = await fetch(`${base}/indexpools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'p' }, spec: { ranges: ['1..9'] } }),
    });
    expect(created.status).toBe(201);
    const claim = await fetch(`${base}/claims`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'c' }, spec: { poolRef: { kind: 'IndexPool', name: 'p' } } }),
    });
    expect(((await claim.json()) as any).status.value).toBe('1');
    const list = await fetch(`${base}/indices?pool=p&limit=5`);
    expect(((await list.json()) as any).items.map((item: any) => item.spec.index)).toEqual([1]);
    const missing = await fetch(`${base}/claims/nope`, { method: 'DELETE' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).reason).toBe('NotFound');
    expect(api.verified.slice(before)).toEqual([
      'POST /v1/namespaces/signed/indexpools',
      'POST /v1/namespaces/signed/claims',
      'GET /v1/namespaces/signed/indices?pool=p&limit=5',
      'DELETE /v1/namespaces/signed/claims/nope',
    ]);
  });

  it('answers 502 with a Status when the API cannot be reached', async () => {
    const nowhere = await startSigningProxy({
      endpoint: 'http://127.0.0.1:9',
      port: 0,
      region: REGION,
      credentials: async () => KEYS,
      sign: true,
    });
    try {
      const answer = await fetch(`${nowhere.url}/v1/healthz`);
      expect(answer.status).toBe(502);
      expect(await answer.json()).toMatchObject({ kind: 'Status', code: 502 });
    } finally {
      await nowhere.close();
    }
  });

  it.runIf(haveKubectl)('carries kubectl: the seed applied and read through signed calls', async () => {
    const kubectl = await kubectlFor(proxy.url);
    try {
      const applied = await kubectl.run(['apply', '-f', 'docs/examples/seed.yaml']);
      expect(applied.stderr).toBe('');
      const value = await kubectl.run(['get', 'claim', 'leaf1-asn', '-o', 'jsonpath={.status.value}']);
      expect(value.stdout).toBe('64512');
      const paths = api.verified.map((call) => call.split('?')[0]);
      expect(paths).toEqual(
        expect.arrayContaining([
          'GET /apis',
          'GET /openapi/v3',
          'POST /apis/pool.networking.metal.ironcore.dev/v1alpha1/namespaces/default/claims',
          'GET /apis/pool.networking.metal.ironcore.dev/v1alpha1/namespaces/default/claims/leaf1-asn',
        ]),
      );
    } finally {
      await kubectl.close();
    }
  });
});

describe('allot proxy and allot kubeconfig', () => {
  it('serves until stopped, saying where', async () => {
    const out: string[] = [];
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = run(['proxy', '--endpoint', allot.url, '--port', '0'], {
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      readStdin: async () => '',
      env: {},
      stop: stopped,
    });
    await eventually(async () => expect(out.length).toBeGreaterThan(0));
    expect(out[0]).toMatch(new RegExp(`^Serving ${allot.url} on http://127\\.0\\.0\\.1:\\d+; Ctrl-C stops$`));
    const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out[0]!)![1]!;
    expect(await (await fetch(`${url}/v1/healthz`)).json()).toEqual({ status: 'ok' });
    stop();
    expect(await running).toBe(0);
  });

  it('says at once when there are no credentials to sign with', async () => {
    const err: string[] = [];
    const code = await run(
      ['proxy', '--endpoint', 'https://abc123.execute-api.eu-west-1.amazonaws.com', '--port', '0'],
      {
        out: () => {},
        err: (line) => err.push(line),
        readStdin: async () => '',
        env: {},
        credentials: async () => {
          throw new Error('Could not load credentials from any providers');
        },
      },
    );
    expect([code, err]).toEqual([
      1,
      ['error: cannot load AWS credentials to sign with: Could not load credentials from any providers'],
    ]);
  });

  it('refuses proxy without an endpoint', async () => {
    const err: string[] = [];
    const code = await run(['proxy'], {
      out: () => {},
      err: (line) => err.push(line),
      readStdin: async () => '',
      env: {},
    });
    expect(code).toBe(2);
    expect(err[0]).toContain('proxy needs --endpoint');
  });

  it('prints a kubeconfig whose current context is the proxy for a deployed endpoint', async () => {
    const out: string[] = [];
    const endpoint = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
    await run(['kubeconfig', '--endpoint', endpoint, '--port', '8002'], {
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      readStdin: async () => '',
      env: {},
    });
    const text = out.join('\n');
    expect(text).toContain(`allot proxy --endpoint ${endpoint} --port 8002`);
    expect(text).toContain('server: http://127.0.0.1:8002');
    expect(text).toContain('current-context: allot-proxy');
  });
});
