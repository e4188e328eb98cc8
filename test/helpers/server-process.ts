/**
 * `npm start`'s entry point (bin/server.ts) as a child process, for the tests that stop, kill and start
 * it again (test/faults/crash.test.ts, test/faults/start-stop.test.ts): starting it, loading it with
 * clients that claim and release, and the invariants a restarted server must reach.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ServerProcess {
  child: ChildProcess;
  /** Everything it printed, stdout and stderr as they came. */
  log: string[];
  /** Resolves with its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

export interface StartedServer extends ServerProcess {
  url: string;
}

/**
 * Runs bin/server.ts with `env` added (PORT=0 unless given). In the DynamoDB Local tier it uses the tier's
 * shared DynamoDB Local (ALLOT_DYNAMODB_LOCAL_ENDPOINT) unless `env` sets that to '': then it starts its
 * own JVM on the data folder, as `npm start` does.
 */
export function spawnServer(env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, log, exited };
}

/** Starts a server on `dataDir`; resolves with its URL once it listens, rejects if it exits first. */
export function startServer(dataDir: string, env: Record<string, string> = {}): Promise<StartedServer> {
  const server = spawnServer({ ALLOT_DATA_DIR: dataDir, ...env });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the server did not start: ${server.log.join('')}`)),
      60_000,
    );
    const onData = () => {
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(server.log.join(''))?.[1];
      if (!url) return;
      clearTimeout(timer);
      server.child.stdout!.off('data', onData);
      resolve({ ...server, url });
    };
    server.child.stdout!.on('data', onData);
    void server.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${String(code)}): ${server.log.join('')}`));
    });
  });
}

export async function call(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}/v1/namespaces/default/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** Every item of a list route, page after page. */
export async function listAll(url: string, path: string): Promise<any[]> {
  const items: any[] = [];
  let token: string | undefined;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page = await call(url, 'GET', `${path}${separator}limit=1000${token ? `&continue=${token}` : ''}`);
    if (page.status !== 200) throw new Error(`GET ${path}: ${page.status}`);
    items.push(...page.body.items);
    token = page.body.metadata?.continue;
  } while (token);
  return items;
}

export interface TestPool {
  name: string;
  reclaimPolicy: 'Recycle' | 'Retain';
  /** One range, `first..last`, starting at 1. */
  range: string;
}

export async function createPools(url: string, pools: readonly TestPool[]): Promise<void> {
  for (const pool of pools) {
    const { status } = await call(url, 'PUT', `indexpools/${pool.name}`, {
      metadata: { name: pool.name },
      spec: { ranges: [pool.range], reclaimPolicy: pool.reclaimPolicy },
    });
    if (status >= 300) throw new Error(`PUT indexpools/${pool.name}: ${status}`);
  }
}

/**
 * `clients` loops that claim and release names at random on `pools` until `stop.stopped`; a loop whose
 * request fails (the server went away under it) ends. Resolves with how many answers came back;
 * `stop.answered`, when given, counts them as they come.
 */
export async function claimLoad(
  url: string,
  options: {
    pools: readonly TestPool[];
    clients: number;
    names: number;
    random: () => number;
    stop: { stopped: boolean; answered?: number };
  },
): Promise<number> {
  const { pools, random, stop } = options;
  let answered = 0;
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      while (!stop.stopped) {
        const pool = pools[Math.floor(random() * pools.length)]!;
        const name = `${pool.name}-c${Math.floor(random() * options.names)}`;
        try {
          if (random() < 0.55)
            await call(url, 'PUT', `claims/${name}`, {
              metadata: { name },
              spec: { poolRef: { kind: 'IndexPool', name: pool.name } },
            });
          else await call(url, 'DELETE', `claims/${name}`);
          answered++;
          if (stop.answered !== undefined) stop.answered++;
        } catch {
          return;
        }
      }
    }),
  );
  return answered;
}

/**
 * The invariants a restarted server must reach, read through the API; none found is the pass: no claim
 * mid-allocation, no allocation object bound to a missing claim, no value held twice, every claim's
 * value bound to it, no claim waiting while its pool has room, and every pool's counts equal a recount.
 */
export async function violations(url: string, pools: readonly TestPool[]): Promise<string[]> {
  const found: string[] = [];
  const claims = await listAll(url, 'claims');
  const byName = new Map(claims.map((claim) => [claim.metadata.name as string, claim]));
  for (const claim of claims) {
    const condition = claim.status.conditions[0];
    if (condition?.status === 'Unknown') found.push(`claim ${claim.metadata.name} is mid-allocation`);
  }
  for (const pool of pools) {
    const objects = await listAll(url, `indices?pool=${pool.name}`);
    const shown = (await call(url, 'GET', `indexpools/${pool.name}`)).body.status;
    const values = new Set<number>();
    for (const object of objects) {
      const ref = object.spec.claimRef;
      if (values.has(object.spec.index)) found.push(`${pool.name}: ${object.spec.index} is held twice`);
      values.add(object.spec.index);
      if (ref?.uid && byName.get(ref.name)?.metadata.uid !== ref.uid)
        found.push(`${object.metadata.name} is bound to a missing claim ${ref.name}`);
    }
    const held = new Map<string, string>();
    for (const claim of claims.filter((c) => c.spec.poolRef.name === pool.name)) {
      const condition = claim.status.conditions[0];
      const value = claim.status.value;
      if (condition?.status === 'True') {
        const object = objects.find((o) => String(o.spec.index) === value);
        if (object?.spec.claimRef?.uid !== claim.metadata.uid)
          found.push(`claim ${claim.metadata.name} says ${value}, whose object is not bound to it`);
        if (held.has(value)) found.push(`${value} of ${pool.name} is held by two claims`);
        held.set(value, claim.metadata.name);
      }
      if (condition?.status === 'False' && Number(shown.free) > 0)
        found.push(`claim ${claim.metadata.name} waits (${condition.reason}) while ${pool.name} has room`);
    }
    found.push(...(await holdingViolations(url, pool.name, objects)));
    const total = Number(pool.range.split('..')[1]);
    if (shown.allocated !== objects.length || Number(shown.free) !== total - objects.length)
      found.push(
        `${pool.name} says allocated ${shown.allocated}, free ${shown.free}; a recount gives ${objects.length}, ${total - objects.length}`,
      );
  }
  return found;
}

/**
 * Who held what (docs/history.md), against the objects: each object has exactly one open holding, for
 * the claim it names (or none), and no other holding of the pool is open.
 */
async function holdingViolations(url: string, pool: string, objects: any[]): Promise<string[]> {
  const all: any[] = [];
  for (let next: string | undefined, first = true; first || next; first = false) {
    const query = `limit=1000${next ? `&continue=${encodeURIComponent(next)}` : ''}`;
    const page = (await call(url, 'GET', `indexpools/${pool}/history?${query}`)).body;
    all.push(...page.items);
    next = page.metadata.continue;
  }
  const open = all.filter((holding) => holding.until === undefined);
  const found: string[] = [];
  for (const object of objects) {
    const mine = open.filter((holding) => holding.allocation.uid === object.metadata.uid);
    const claim = object.spec.claimRef?.uid || undefined;
    if (mine.length !== 1 || mine[0].claim?.uid !== claim) {
      // The value's whole past, so a finding says how it came about.
      const past = all.filter((holding) => holding.value === String(object.spec.index));
      found.push(
        `${pool}: ${object.metadata.name} (claim ${claim}, made ${object.metadata.creationTimestamp}, seen ${new Date().toISOString()}) has open holdings ${JSON.stringify(mine)}; the value's past: ${JSON.stringify(past)}`,
      );
    }
  }
  for (const holding of open)
    if (!objects.some((object) => object.metadata.uid === holding.allocation.uid))
      found.push(`${pool}: an open holding of an object that is gone: ${JSON.stringify(holding)}`);
  return found;
}

/** Polls `violations` until none is found or `withinMs` has passed; returns the last finding and when. */
export async function healed(
  url: string,
  pools: readonly TestPool[],
  withinMs: number,
): Promise<{ found: string[]; healedMs: number }> {
  const started = Date.now();
  let found: string[] = [];
  for (;;) {
    found = await violations(url, pools);
    if (process.env.HEAL_DEBUG && found.length > 0)
      console.log(
        Date.now() - started,
        found.map((f) => f.slice(0, 400)),
      );
    if (found.length === 0 || Date.now() - started > withinMs) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return { found, healedMs: Date.now() - started };
}
