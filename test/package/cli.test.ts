/**
 * `allot` as a user installs it: `npm pack` of this clone (test/helpers/pack.ts), installed offline with
 * `npm install -g` into a scratch prefix and as a project's dependency (run by `npx`), then run as a
 * process on plain Node with nothing else on PATH and no node_modules above it: against a local server,
 * and against an https endpoint that checks every request's SigV4 signature (the credential chain reads
 * the environment's keys), through `apply`, `get`, `describe`, `claim`, `preview`, `release`, `history`,
 * `kubeconfig`, `proxy` and `ui`, whose page (built at pack time) Chromium renders.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestAllot } from '../helpers/allot.ts';
import { browserMissing, launchBrowser } from '../helpers/browser.ts';
import { packInto, repositoryRoot } from '../helpers/pack.ts';
import { haveCommand } from '../helpers/tools.ts';
import {
  startVerifier,
  VERIFIER_CREDENTIALS,
  VERIFIER_REGION,
  type Verifier,
} from '../helpers/sigv4-verifier.ts';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'allot-cli-package-'));
const globalPrefix = join(scratch, 'global');
const project = join(scratch, 'project');
const elsewhere = join(scratch, 'elsewhere');
const version = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')).version as string;

/** Node and nothing else: no tsx, esbuild or repository node_modules on the way. */
const bareEnv = {
  PATH: [join(globalPrefix, 'bin'), dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
  HOME: scratch,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** The https endpoint's certificate is made with openssl: without it, the signed tests skip (fail under CI). */
const signedSkipped = !haveCommand('openssl') && process.env.CI !== 'true';
if (signedSkipped) console.log('allot against an https endpoint: skipped, openssl is not on PATH');

let allot: Awaited<ReturnType<typeof startTestAllot>>;
let verifier: Verifier;
let tls: { server: TlsServer; url: string; ca: string };

/** An https front for the verifier: TLS ends here and the bytes go on as they came, Host and all. */
async function startTlsFront(target: string): Promise<typeof tls> {
  const key = join(scratch, 'key.pem');
  const ca = join(scratch, 'cert.pem');
  await run('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
    ...['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', ca],
  ]);
  const { port } = new URL(target);
  const server = createTlsServer({ key: readFileSync(key), cert: readFileSync(ca) }, (socket) => {
    const upstream = connect(Number(port), '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, ca };
}

beforeAll(async () => {
  const tarball = await packInto(scratch);
  const npm = { env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 16 << 20 };
  await run(
    'npm',
    ['install', '-g', '--prefix', globalPrefix, tarball, '--offline', '--no-audit', '--no-fund'],
    npm,
  );
  mkdirSync(project);
  mkdirSync(elsewhere);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'team-tools',
      version: '0.0.0',
      private: true,
      dependencies: { allot: `file:${tarball}` },
    }),
  );
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund'], { ...npm, cwd: project });
  allot = await startTestAllot();
  verifier = await startVerifier({ forwardTo: allot.url });
  if (!signedSkipped) tls = await startTlsFront(verifier.url);
}, 900_000); // the pack bundles every function; another test file's pack may hold the lock first

afterAll(async () => {
  if (tls) await new Promise((resolve) => tls.server.close(resolve));
  await verifier?.close();
  await allot?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The globally installed `allot`, run from a folder with no package around it. */
async function allotCommand(args: string[], env: Record<string, string> = {}) {
  return run('allot', args, { cwd: elsewhere, env: { ...bareEnv, ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

/** Signing for the https endpoint: the keys in the environment, as the AWS credential chain reads them. */
const signedEnv = () => ({
  AWS_ACCESS_KEY_ID: VERIFIER_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: VERIFIER_CREDENTIALS.secretAccessKey,
  AWS_SESSION_TOKEN: VERIFIER_CREDENTIALS.sessionToken,
  AWS_REGION: VERIFIER_REGION,
  NODE_EXTRA_CA_CERTS: tls.ca,
  ALLOT_ENDPOINT: tls.url,
});

/** Starts a serving command (`proxy`, `ui`); resolves with the URL it prints and the process. */
function serving(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn('allot', args, { cwd: elsewhere, env: { ...bareEnv, ...env } });
  let printed = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(printed)?.[1];
      if (url) resolve({ child, url });
    });
    child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`allot ${args[0]} exited (${code}): ${printed}`)));
  });
}

describe('allot, installed with npm install -g from the tarball', () => {
  it('installs nothing but itself, its bin is the built JavaScript, and it carries its licenses', () => {
    expect(readdirSync(join(globalPrefix, 'lib', 'node_modules'))).toEqual(['allot']);
    const installed = join(globalPrefix, 'lib', 'node_modules', 'allot');
    expect(readdirSync(installed)).not.toContain('node_modules');
    expect(readFileSync(join(installed, 'dist', 'cli', 'allot.js'), 'utf8')).toMatch(
      /^#!\/usr\/bin\/env node\n/,
    );
    // What it bundles is named with its license: the CLI's parser and signer, the console's renderer.
    const notices = readFileSync(join(installed, 'dist', 'THIRD_PARTY_LICENSES.md'), 'utf8');
    for (const name of ['yaml', '@smithy/signature-v4', 'lit-html', '@aws-sdk/client-dynamodb'])
      expect(notices).toMatch(new RegExp(`^## ${name}@\\d+\\.\\d+\\.\\d+ \\([\\w.-]+\\)$`, 'm'));
    expect(readdirSync(installed)).toEqual(expect.arrayContaining(['LICENSE', 'CHANGELOG.md', 'README.md']));
  });

  it('prints its version, and the server’s, both from package.json', async () => {
    const answer = await allotCommand(['version', '--endpoint', allot.url]);
    expect(answer.stderr).toBe('');
    expect(answer.stdout).toBe(`Client Version: v${version}\nServer Version: v${version} (${allot.url})\n`);
    expect((await allotCommand(['version', '--client'])).stdout).toBe(`Client Version: v${version}\n`);
  });

  it('drives a local server: apply, get, describe, claim, preview, release', async () => {
    const endpoint = { ALLOT_ENDPOINT: allot.url };
    const seed = join(repositoryRoot, 'docs', 'examples', 'seed.yaml');
    expect((await allotCommand(['apply', '-f', seed, '--wait'], endpoint)).stdout).toMatch(
      /indexpool\/asn-pool created/,
    );
    expect((await allotCommand(['get', 'pools'], endpoint)).stdout).toMatch(/asn-pool\s+IndexPool/);
    expect((await allotCommand(['describe', 'indexpool', 'asn-pool'], endpoint)).stdout).toMatch(
      /Name:\s+asn-pool/,
    );
    const claimed = await allotCommand(
      ['claim', 'spine1-asn', '--pool', 'indexpool/asn-pool', '--wait'],
      endpoint,
    );
    expect(claimed.stdout).toMatch(/^claim\/spine1-asn: \d+ from IndexPool asn-pool/);
    expect((await allotCommand(['preview', 'asn-pool', '--count', '2'], endpoint)).code).toBe(0);
    expect((await allotCommand(['release', 'spine1-asn'], endpoint)).stdout).toMatch(/spine1-asn/);
    expect((await allotCommand(['get', 'claim', 'spine1-asn'], endpoint)).code).toBe(1);
    // Who held it: once the history function has read the release.
    await eventually(async () =>
      expect((await allotCommand(['history', '--claim', 'spine1-asn'], endpoint)).stdout).toMatch(
        /default\/spine1-asn\s+\S+\s+\S+\s+Released/,
      ),
    );
  });

  it.skipIf(signedSkipped)(
    'signs every call to an https endpoint with the credential chain’s keys',
    async () => {
      const before = verifier.verified.length;
      const got = await allotCommand(['get', 'indexpools', '-o', 'json'], signedEnv());
      expect(got.stderr).toBe('');
      expect(JSON.parse(got.stdout).items.map((pool: any) => pool.metadata.name)).toContain('asn-pool');
      const claimed = await allotCommand(
        ['claim', 'leaf9-asn', '--pool', 'indexpool/asn-pool', '--wait'],
        signedEnv(),
      );
      expect(claimed.code, claimed.stderr).toBe(0);
      expect(verifier.verified.length).toBeGreaterThan(before + 1);
      expect(verifier.rejected).toEqual([]);
      // A wrong secret is refused by the endpoint, and said so.
      const refused = await allotCommand(['get', 'indexpools'], {
        ...signedEnv(),
        AWS_SECRET_ACCESS_KEY: 'wrong',
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/403|Forbidden/);
    },
  );

  it.skipIf(signedSkipped)(
    'prints a kubeconfig, and serves the endpoint signed for kubectl with proxy',
    async () => {
      expect((await allotCommand(['kubeconfig', '--endpoint', tls.url])).stdout).toMatch(/allot-proxy/);
      const { child, url } = await serving(['proxy', '--port', '0'], signedEnv());
      try {
        const response = await fetch(
          `${url}/apis/pool.networking.metal.ironcore.dev/v1alpha1/namespaces/default/indexpools`,
        );
        expect(response.status).toBe(200);
        expect(JSON.stringify(await response.json())).toContain('asn-pool');
      } finally {
        child.kill('SIGTERM');
      }
    },
  );

  it.skipIf((browserMissing !== undefined && process.env.CI !== 'true') || signedSkipped)(
    'serves the console page built at pack time with ui, and Chromium shows the endpoint’s pools',
    async () => {
      if (browserMissing) throw new Error(`CI=true needs the browser: ${browserMissing}`);
      const { child, url } = await serving(['ui', '--port', '0'], signedEnv());
      const browser = await launchBrowser();
      try {
        const page = await browser.context.newPage();
        const errors: Error[] = [];
        page.on('pageerror', (error) => errors.push(error));
        await page.goto(`${url}/`);
        await page.getByRole('row', { name: /asn-pool/ }).waitFor({ timeout: 60_000 });
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
        child.kill('SIGTERM');
      }
    },
    120_000,
  );
});

describe('allot, a project’s dependency, run by npx', () => {
  it('runs from node_modules/.bin with only the project’s install', async () => {
    const npx = (args: string[]) =>
      run('npx', ['--offline', 'allot', ...args], {
        cwd: project,
        env: {
          ...bareEnv,
          PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
          ALLOT_ENDPOINT: allot.url,
        },
      });
    expect((await npx(['version', '--client'])).stdout).toBe(`Client Version: v${version}\n`);
    expect((await npx(['get', 'indexpools'])).stdout).toMatch(/asn-pool/);
  });
});
