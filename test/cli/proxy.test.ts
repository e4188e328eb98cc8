/**
 * The signing proxy (lib/cli/proxy.ts) and `allot ui`, against a stand-in for API Gateway that
 * checks every request's SigV4 signature by signing it again (test/helpers/sigv4-verifier.ts).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../lib/cli/main.ts';
import { startSigningProxy, type SigningProxy } from '../../lib/cli/proxy.ts';
import {
  startVerifier,
  VERIFIER_CREDENTIALS,
  VERIFIER_REGION,
  type Verifier,
} from '../helpers/sigv4-verifier.ts';

const credentials = async () => VERIFIER_CREDENTIALS;

let verifier: Verifier;
let proxy: SigningProxy;

beforeAll(async () => {
  verifier = await startVerifier();
  proxy = await startSigningProxy({
    endpoint: `${verifier.url}/stage`,
    port: 0,
    region: VERIFIER_REGION,
    credentials,
    serve: (request, response) => {
      if (request.url !== '/served-here') return false;
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('answered by the hook');
      return true;
    },
  });
});

afterAll(async () => {
  await proxy?.close();
  await verifier?.close();
});

const counts = () => ({ verified: verifier.verified.length, rejected: verifier.rejected.length });

describe('startSigningProxy', () => {
  it('listens on 127.0.0.1 and forwards a GET signed, under the endpoint’s path, query and all', async () => {
    expect(new URL(proxy.url).hostname).toBe('127.0.0.1');
    const response = await fetch(`${proxy.url}/v1/namespaces/default/indexpools?limit=5&continue=a%2Fb`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      echo: '/stage/v1/namespaces/default/indexpools?limit=5&continue=a%2Fb',
      body: '',
    });
    expect(verifier.rejected).toEqual([]);
    const arrival = verifier.verified.at(-1)!;
    expect(arrival.headers['x-amz-security-token']).toBe(VERIFIER_CREDENTIALS.sessionToken);
    // only what the API needs comes back
    expect(response.headers.get('x-internal')).toBeNull();
  });

  it('signs the body of a POST and a DELETE as sent', async () => {
    const body = JSON.stringify({
      metadata: { name: 'leaf1-asn' },
      spec: { poolRef: { kind: 'IndexPool', name: 'asn-pool' } },
    });
    const response = await fetch(`${proxy.url}/v1/namespaces/default/claims`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'session=secret' },
      body,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { body: string }).body).toBe(body);
    const arrival = verifier.verified.at(-1)!;
    expect(arrival.headers['content-type']).toBe('application/json');
    expect(arrival.headers.cookie).toBeUndefined();
    expect(
      (await fetch(`${proxy.url}/v1/namespaces/default/claims/leaf1-asn`, { method: 'DELETE' })).status,
    ).toBe(200);
    expect(verifier.rejected).toEqual([]);
  });

  it('passes the API’s refusal back when the keys are not the ones it knows', async () => {
    const wrong = await startSigningProxy({
      endpoint: verifier.url,
      port: 0,
      region: VERIFIER_REGION,
      credentials: async () => ({ ...VERIFIER_CREDENTIALS, secretAccessKey: 'not-the-secret' }),
    });
    try {
      const response = await fetch(`${wrong.url}/v1/healthz`);
      expect(response.status).toBe(403);
      expect(((await response.json()) as { message: string }).message).toMatch(/signature does not match/);
    } finally {
      await wrong.close();
    }
  });

  it('answers 401 in the Status shape when there are no credentials to sign with, and forwards nothing', async () => {
    const before = counts();
    const unsigned = await startSigningProxy({
      endpoint: verifier.url,
      port: 0,
      region: VERIFIER_REGION,
      credentials: async () => {
        throw new Error('Could not load credentials from any providers');
      },
    });
    try {
      const response = await fetch(`${unsigned.url}/v1/healthz`);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
    } finally {
      await unsigned.close();
    }
    expect(counts()).toEqual(before);
  });

  it('refuses pages of another origin and host names other than this machine’s, forwarding nothing', async () => {
    const before = counts();
    const foreign = await fetch(`${proxy.url}/v1/namespaces/default/claims/x`, {
      method: 'DELETE',
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    // a name rebound to 127.0.0.1 (fetch will not send another Host, node:http will)
    const rebound = await new Promise<number>((resolve, reject) => {
      const { port } = new URL(proxy.url);
      request(
        { host: '127.0.0.1', port, path: '/v1/healthz', headers: { host: `evil.example:${port}` } },
        (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        },
      )
        .once('error', reject)
        .end();
    });
    expect(rebound).toBe(403);
    expect(counts()).toEqual(before);
    // the page's own origin is welcome
    expect((await fetch(`${proxy.url}/v1/healthz`, { headers: { origin: proxy.url } })).status).toBe(200);
  });

  it('lets the serve hook answer what it serves, unsigned and unforwarded', async () => {
    const before = counts();
    const response = await fetch(`${proxy.url}/served-here`);
    expect(await response.text()).toBe('answered by the hook');
    expect(counts()).toEqual(before);
  });

  it('needs a region it can tell', async () => {
    await expect(startSigningProxy({ endpoint: verifier.url, port: 0, credentials })).rejects.toThrow(
      /cannot tell the region/,
    );
  });
});

describe('allot ui', () => {
  it('serves the console on 127.0.0.1 and forwards its API calls signed, until stopped', async () => {
    const out: string[] = [];
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = run(['ui', '--endpoint', verifier.url, '--port', '0', '--region', VERIFIER_REGION], {
      out: (line) => out.push(line),
      err: (line) => out.push(line),
      readStdin: async () => '',
      env: {},
      credentials,
      stop: stopped,
    });
    await expect.poll(() => out.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const url = /Allot console on (http:\/\/127\.0\.0\.1:\d+)\//.exec(out[0]!)?.[1];
    expect(url, out.join('\n')).toBeDefined();
    const page = await fetch(`${url}/`);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('<script type="module" src="/console.js">');
    expect((await fetch(`${url}/console.js`)).headers.get('content-type')).toMatch(/javascript/);
    const before = verifier.verified.length;
    expect((await fetch(`${url}/v1/namespaces/default/indexpools`)).status).toBe(200);
    expect(verifier.verified.length).toBe(before + 1);
    stop();
    expect(await running).toBe(0);
  });

  it('needs an endpoint', async () => {
    const err: string[] = [];
    const code = await run(['ui'], {
      out: () => undefined,
      err: (line) => err.push(line),
      readStdin: async () => '',
      env: {},
    });
    expect(code).toBe(2);
    expect(err.join('\n')).toMatch(/allot ui needs --endpoint/);
  });
});
