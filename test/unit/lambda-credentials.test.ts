/**
 * The credential chain of the Lambda bundles (functions/lambda-credentials.ts): the environment's
 * credentials first, else a container credentials endpoint's (a local one here), kept until five minutes
 * before they expire, as the SDK's own chain keeps them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultProvider } from '../../functions/lambda-credentials.ts';

let endpoint: Server;
let url: string;
let requests = 0;
/** How long from now the credentials the endpoint hands out are valid. */
let validForMs = 3_600_000;

beforeAll(async () => {
  endpoint = createServer((_, response) => {
    requests++;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        AccessKeyId: `container-${requests}`,
        SecretAccessKey: 'secret',
        Token: 'token',
        Expiration: new Date(Date.now() + validForMs).toISOString(),
      }),
    );
  });
  await new Promise<void>((done) => endpoint.listen(0, '127.0.0.1', () => done()));
  url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/credentials`;
});
afterAll(() => new Promise<void>((done) => endpoint.close(() => done())));

// The runner's own environment has no say: each test sets what it needs and clears the rest.
const NAMES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CREDENTIAL_EXPIRATION',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
];
function environment(values: Record<string, string>) {
  for (const name of NAMES) vi.stubEnv(name, values[name]);
}
afterEach(() => {
  vi.unstubAllEnvs();
  requests = 0;
  validForMs = 3_600_000;
});

describe('the Lambda credential chain', () => {
  it('takes the environment’s credentials first, even with a container endpoint set', async () => {
    environment({
      AWS_ACCESS_KEY_ID: 'AKIDENV',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'token',
      AWS_CONTAINER_CREDENTIALS_FULL_URI: url,
    });
    const credentials = await defaultProvider()();
    expect(credentials).toMatchObject({
      accessKeyId: 'AKIDENV',
      secretAccessKey: 'secret',
      sessionToken: 'token',
    });
    expect(requests).toBe(0);
  });

  it('asks the container endpoint when the environment has none, once while the credentials last', async () => {
    environment({ AWS_CONTAINER_CREDENTIALS_FULL_URI: url });
    const provider = defaultProvider();
    const [first, second] = await Promise.all([provider(), provider()]);
    expect(first).toMatchObject({ accessKeyId: 'container-1', sessionToken: 'token' });
    expect(second).toBe(first);
    expect(await provider()).toBe(first);
    expect(requests).toBe(1);
  });

  it('asks again for credentials within five minutes of expiring', async () => {
    environment({ AWS_CONTAINER_CREDENTIALS_FULL_URI: url });
    validForMs = 120_000;
    const provider = defaultProvider();
    expect(await provider()).toMatchObject({ accessKeyId: 'container-1' });
    expect(await provider()).toMatchObject({ accessKeyId: 'container-2' });
  });

  it('fails, saying the environment has no credentials, when neither place has any', async () => {
    environment({});
    await expect(defaultProvider()()).rejects.toMatchObject({
      name: 'CredentialsProviderError',
      message: 'Unable to find environment variable credentials.',
    });
  });
});
