/**
 * `allot`: a kubectl-like CLI for the API. `run` takes its arguments and its streams, so tests drive it
 * in-process; bin/allot.ts is the executable.
 */
import { renderSharedPools, sharedPoolsOf } from './shared.ts';
import { POOL_RESOURCES, poolFlag, resourcesOf } from './resources.ts';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { API_VERSION, POOL_KINDS, kindOfResource, type Resource } from '../domain/kinds.ts';
import {
  ALLOCATION_COLUMNS,
  CLAIM_COLUMNS,
  POOL_COLUMNS,
  renderDescribe,
  renderTable,
  type Column,
} from './format.ts';
import {
  ApiClient,
  CliError,
  LOCAL_ENDPOINT,
  regionOfEndpoint,
  type Answer,
  type CredentialProvider,
} from './http.ts';
import { allocatedOf, claimLine, failure } from './answers.ts';
import { parseManifests } from './manifests.ts';
import { kubeconfigCommand, proxyCommand } from './kube-commands.ts';
import { runUi } from './ui.ts';
import { versionCommand } from './version.ts';
import { historyCommand } from './history.ts';

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  readStdin(): Promise<string>;
  env: Record<string, string | undefined>;
  /** Whether stderr is a terminal (progress lines are drawn only there). */
  progress?: boolean;
  /** For tests: credentials instead of the AWS chain. */
  credentials?: CredentialProvider;
  /** When a command that serves (`proxy`, `ui`) stops: by default at SIGINT or SIGTERM. */
  stop?: Promise<unknown>;
}

export const USAGE = `allot: hands out numbered resources (ASNs, VLANs, IP addresses, prefixes) from pools

Usage:
  allot apply -f <file|-> [--wait]            create or update what the manifests describe (YAML or JSON)
  allot get <resource> [name] [-l selector] [--field-selector f=v] [-o table|wide|json|yaml]
  allot describe <pool-resource> <name>       spec, status, utilisation and a map of taken and free values
  allot claim <name> --pool [<namespace>/]<kind>/<pool> [--value v] [--within w] [--reserved a,b]
              [--prefix-length L] [--owner <kind>/<name>] [--lease-seconds S] [--wait]
  allot preview <pool> [--count N] [--prefix-length L] [--within w] [--reserved a,b]
                                              the values claims made now would get (holds nothing)
  allot release <name>                        delete a claim; its pool's reclaim policy then applies
  allot renew <name> [--pool <kind>/<pool>]   start a lease claim's lease again from now
  allot delete <resource> <name> [--cascade]
  allot ui --endpoint <url> [--port 8001]     the console for a deployed API, on 127.0.0.1, its calls signed
  allot proxy --endpoint <url> [--port 8001]  serve a deployed API on 127.0.0.1, every call signed (for kubectl)
  allot kubeconfig [--port 8001]              print a kubeconfig: the local server, and allot proxy
  allot repair [--dry-run]                    sweep the namespace: what lost stream records left behind
  allot version [--client]                    the CLI's version, and the server's (not with --client)
  allot history [<value>] --pool <kind>/<pool> [--within R] [--at T | --since S --until U]
  allot history --claim <name>                who held the values, and when (newest first)

Resources: pools (all three kinds), indexpools, ipaddresspools, ipprefixpools, claims,
  allocations (all three kinds), indices, ipaddresses, ipprefixes (singular forms work too)

Options:
  -n, --namespace <ns>   the namespace (default "default")
  --endpoint <url>       the API (default $ALLOT_ENDPOINT, else ${LOCAL_ENDPOINT});
                         https endpoints are signed with SigV4 (execute-api) from the AWS credential chain
  --region <region>      for signing (default: from the endpoint's host name, else $AWS_REGION)
  --timeout <seconds>    how long --wait waits (default 30)
  -h, --help, help       this text (through npx: "npx allot help")
`;

const OPTIONS = {
  namespace: { type: 'string', short: 'n', default: 'default' },
  output: { type: 'string', short: 'o', default: 'table' },
  selector: { type: 'string', short: 'l' },
  'field-selector': { type: 'string' },
  filename: { type: 'string', short: 'f' },
  wait: { type: 'boolean', default: false },
  pool: { type: 'string' },
  value: { type: 'string' },
  within: { type: 'string' },
  reserved: { type: 'string' },
  owner: { type: 'string' },
  count: { type: 'string' },
  'prefix-length': { type: 'string' },
  'lease-seconds': { type: 'string' },
  cascade: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  endpoint: { type: 'string' },
  region: { type: 'string' },
  timeout: { type: 'string', default: '30' },
  port: { type: 'string' },
  client: { type: 'boolean', default: false },
  claim: { type: 'string' },
  at: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Options = {
  namespace: string;
  output: string;
  selector?: string;
  'field-selector'?: string;
  filename?: string;
  wait: boolean;
  pool?: string;
  value?: string;
  within?: string;
  reserved?: string;
  owner?: string;
  count?: string;
  'prefix-length'?: string;
  'lease-seconds'?: string;
  cascade: boolean;
  'dry-run': boolean;
  endpoint?: string;
  region?: string;
  timeout: string;
  port?: string;
  client: boolean;
  claim?: string;
  at?: string;
  since?: string;
  until?: string;
  help: boolean;
};

/** Runs one command; returns the exit code (0 done, 1 failed, 2 usage). */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw new CliError(`${(error as Error).message}\nRun "allot help" for usage.`, [], 2);
    }
    const options = parsed.values as Options;
    const [command, ...args] = parsed.positionals;
    if (options.help || command === undefined || command === 'help') {
      io.out(USAGE.trimEnd());
      return 0;
    }
    const endpoint = options.endpoint ?? io.env.ALLOT_ENDPOINT ?? LOCAL_ENDPOINT;
    const region =
      options.region ?? regionOfEndpoint(endpoint) ?? io.env.AWS_REGION ?? io.env.AWS_DEFAULT_REGION;
    if (command === 'proxy') return await proxyCommand(args, endpoint, region, io, options);
    if (command === 'kubeconfig') return kubeconfigCommand(args, endpoint, io, options);
    const cli = new Cli(new ApiClient({ endpoint, region, credentials: io.credentials }), io, options);
    switch (command) {
      case 'apply':
        return await cli.apply(args);
      case 'get':
        return await cli.get(args);
      case 'describe':
        return await cli.describe(args);
      case 'claim':
        return await cli.claim(args);
      case 'release':
        return await cli.release(args);
      case 'renew':
        return await cli.renew(args);
      case 'preview':
        return await cli.preview(args);
      case 'delete':
        return await cli.delete(args);
      case 'ui':
        return await runUi({
          endpoint: options.endpoint ?? io.env.ALLOT_ENDPOINT,
          port: options.port,
          region,
          credentials: io.credentials,
          out: io.out,
          stop: io.stop,
        });
      case 'repair':
        return await cli.repair(args);
      case 'history':
        return await historyCommand(cli.api, args, options, io.out);
      case 'version':
        return await versionCommand(cli.api, args, io, options.client);
      default:
        throw new CliError(`unknown command "${command}"\nRun "allot help" for usage.`, [], 2);
    }
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`error: ${error.message}`);
      for (const line of error.lines) io.err(line);
      return error.exitCode;
    }
    throw error;
  }
}

export { resourcesOf };

function columnsOf(resource: Resource): readonly Column[] {
  if (resource === 'claims') return CLAIM_COLUMNS;
  return POOL_RESOURCES.includes(resource as never) ? POOL_COLUMNS : ALLOCATION_COLUMNS;
}

const kindWord = (resource: Resource) => kindOfResource(resource).toLowerCase();

class Cli {
  constructor(
    readonly api: ApiClient,
    private readonly io: CliIO,
    private readonly options: Options,
  ) {}

  private path(resource: Resource, name?: string, namespace = this.options.namespace): string {
    const base = `/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`;
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  private async expect(answer: Promise<Answer>, ...codes: number[]): Promise<Answer> {
    const result = await answer;
    if (!codes.includes(result.status)) throw failure(result);
    return result;
  }

  private async list(resource: Resource, query = ''): Promise<Record<string, any>[]> {
    const items: Record<string, any>[] = [];
    let token: string | undefined;
    do {
      const params = new URLSearchParams(query);
      params.set('limit', '1000');
      if (token) params.set('continue', token);
      const answer = await this.expect(this.api.call('GET', `${this.path(resource)}?${params}`), 200);
      items.push(...answer.body.items);
      token = answer.body.metadata?.continue;
    } while (token);
    return items;
  }

  private timeoutMs(): number {
    const seconds = Number(this.options.timeout);
    if (!Number.isFinite(seconds) || seconds < 0)
      throw new CliError('--timeout must be a number of seconds', [], 2);
    return seconds * 1000;
  }

  /** Polls a claim until it is allocated; throws with its reason when the time is up. */
  private async waitForClaim(name: string, namespace: string): Promise<Record<string, any>> {
    const deadline = Date.now() + this.timeoutMs();
    for (;;) {
      const answer = await this.expect(this.api.call('GET', this.path('claims', name, namespace)), 200);
      const allocated = allocatedOf(answer.body);
      if (allocated?.status === 'True') return answer.body;
      if (allocated?.reason === 'PoolRefInvalid' || Date.now() >= deadline) {
        throw new CliError(
          `claim/${name} is not allocated${allocated?.reason === 'PoolRefInvalid' ? '' : ` after ${this.options.timeout}s`}: ${allocated?.reason ?? 'Unknown'}: ${allocated?.message ?? ''}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async apply(args: string[]): Promise<number> {
    if (args.length) throw new CliError(`apply takes no arguments (got ${args.join(' ')}); use -f`, [], 2);
    const file = this.options.filename;
    if (!file) throw new CliError('apply needs -f <file> (or -f - for standard input)', [], 2);
    let text: string;
    try {
      text = file === '-' ? await this.io.readStdin() : await readFile(file, 'utf8');
    } catch (error) {
      throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
    }
    const manifests = parseManifests(text, file === '-' ? 'stdin' : file);
    let failed = 0;
    const claims: { name: string; namespace: string }[] = [];
    for (const [i, manifest] of manifests.entries()) {
      if (this.io.progress && manifests.length > 10) this.io.err(`applying ${i + 1}/${manifests.length}…`);
      const namespace = manifest.namespace ?? this.options.namespace;
      const label = `${kindWord(manifest.resource)}/${manifest.name}`;
      try {
        const itemPath = this.path(manifest.resource, manifest.name, namespace);
        const current = await this.api.call('GET', itemPath);
        if (current.status === 404) {
          await this.expect(
            this.api.call('POST', this.path(manifest.resource, undefined, namespace), manifest.body),
            201,
          );
          this.io.out(`${label} created`);
        } else if (current.status === 200) {
          const answer = await this.expect(this.api.call('PUT', itemPath, manifest.body), 200, 201);
          this.io.out(`${label} ${sameObject(current.body, answer.body) ? 'unchanged' : 'configured'}`);
        } else throw failure(current);
        if (manifest.resource === 'claims') claims.push({ name: manifest.name, namespace });
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        failed++;
        this.io.err(`error: ${label} (${manifest.source}): ${error.message}`);
        for (const line of error.lines) this.io.err(line);
      }
    }
    if (this.options.wait) {
      for (const claim of claims) {
        try {
          const done = await this.waitForClaim(claim.name, claim.namespace);
          this.io.out(`claim/${claim.name} allocated: ${done.status.value}`);
        } catch (error) {
          if (!(error instanceof CliError)) throw error;
          failed++;
          this.io.err(`error: ${error.message}`);
        }
      }
    }
    return failed ? 1 : 0;
  }

  async get(args: string[]): Promise<number> {
    const [word, name, ...rest] = args;
    if (!word || rest.length)
      throw new CliError('usage: allot get <resource> [name] [-o table|wide|json|yaml]', [], 2);
    const output = this.options.output;
    if (!['table', 'wide', 'json', 'yaml'].includes(output))
      throw new CliError(`-o must be table, wide, json or yaml (got ${output})`, [], 2);
    const resources = resourcesOf(word);
    // Kubernetes' selectors, as kubectl's -l and --field-selector send them (the server parses them).
    const selected = new URLSearchParams();
    if (this.options.selector !== undefined) selected.set('labelSelector', this.options.selector);
    if (this.options['field-selector'] !== undefined)
      selected.set('fieldSelector', this.options['field-selector']);
    if (name !== undefined && selected.size > 0)
      throw new CliError('a name cannot be given with -l or --field-selector', [], 2);
    if (name !== undefined) {
      const found = await this.findOne(resources, name);
      if (output === 'json' || output === 'yaml') this.print(found.object, output);
      else this.io.out(renderTable(columnsOf(found.resource), [found.object], output === 'wide'));
      return 0;
    }
    const lists: { resource: Resource; items: Record<string, any>[] }[] = [];
    for (const resource of resources)
      lists.push({ resource, items: await this.list(resource, selected.toString()) });
    const items = lists.flatMap((list) => list.items);
    // Pools of other namespaces shared with this one, with its own usage and limit (a tenant's view).
    const shared = await sharedPoolsOf(this.api, this.options.namespace, resources, selected.size > 0);
    if (output === 'json' || output === 'yaml') {
      this.print({ apiVersion: 'v1', kind: 'List', items: [...items, ...shared] }, output);
      return 0;
    }
    if (items.length + shared.length === 0) {
      this.io.err(`No resources found in ${this.options.namespace} namespace.`);
      return 0;
    }
    // One table for a kind family: pools share their columns, as do allocation objects.
    if (items.length) this.io.out(renderTable(columnsOf(resources[0]!), items, output === 'wide'));
    if (shared.length)
      this.io.out(renderSharedPools(this.options.namespace, shared, output === 'wide', items.length > 0));
    return 0;
  }

  private async findOne(resources: Resource[], name: string) {
    let last: Answer | undefined;
    for (const resource of resources) {
      const answer = await this.api.call('GET', this.path(resource, name));
      if (answer.status === 200) return { resource, object: answer.body as Record<string, any> };
      if (answer.status !== 404) throw failure(answer);
      last = answer;
    }
    if (resources.length === 1) throw failure(last!);
    throw new CliError(
      `no ${resources.map(kindOfResource).join(', ')} named "${name}" in namespace ${this.options.namespace}`,
    );
  }

  private print(value: unknown, output: string): void {
    this.io.out(output === 'json' ? JSON.stringify(value, null, 2) : stringify(value).trimEnd());
  }

  async describe(args: string[]): Promise<number> {
    const [word, name, ...rest] = args;
    if (!word || !name || rest.length)
      throw new CliError('usage: allot describe <pool-resource> <name>', [], 2);
    const resources = resourcesOf(word).filter((resource) => POOL_RESOURCES.includes(resource as never));
    if (resources.length === 0)
      throw new CliError('describe shows pools: pools, indexpools, ipaddresspools or ipprefixpools', [], 2);
    const { object: pool } = await this.findOne(resources, name);
    const info = POOL_KINDS.find((p) => p.kind === pool.kind)!;
    const limit = 10_000;
    const values: string[] = [];
    let token: string | undefined;
    do {
      const params = new URLSearchParams({ pool: name, limit: '1000' });
      if (token) params.set('continue', token);
      const answer = await this.expect(
        this.api.call('GET', `${this.path(info.allocationResource)}?${params}`),
        200,
      );
      for (const item of answer.body.items) values.push(String(item.spec[info.valueField]));
      token = answer.body.metadata?.continue;
    } while (token && values.length < limit);
    this.io.out(renderDescribe(pool, values, token !== undefined));
    return 0;
  }

  private claimPool() {
    return poolFlag(this.options.pool);
  }

  async claim(args: string[]): Promise<number> {
    const [name, ...rest] = args;
    if (!name || rest.length)
      throw new CliError(
        'usage: allot claim <name> --pool <kind>/<name> [--value v] [--within w] [--wait]',
        [],
        2,
      );
    const spec: Record<string, unknown> = { poolRef: await this.claimPool() };
    if (this.options.value !== undefined) spec.value = this.options.value;
    if (this.options.within !== undefined) spec.within = this.options.within;
    if (this.options['prefix-length'] !== undefined) spec.prefixLength = this.prefixLength();
    if (this.options.owner !== undefined) {
      // The kind ends at the first "/": owner names may hold one (PiVirt's "web-01/0").
      const slash = this.options.owner.indexOf('/');
      if (slash <= 0 || slash === this.options.owner.length - 1)
        throw new CliError(`--owner must be <kind>/<name> (got ${this.options.owner})`, [], 2);
      spec.owner = { kind: this.options.owner.slice(0, slash), name: this.options.owner.slice(slash + 1) };
    }
    if (this.options.reserved !== undefined) spec.reserved = this.options.reserved.split(',').filter(Boolean);
    if (this.options['lease-seconds'] !== undefined) {
      const text = this.options['lease-seconds'];
      // Sent as a number when it is one; the API names what is wrong with it (422) otherwise.
      spec.leaseSeconds = /^[0-9]+$/.test(text) ? Number(text) : text;
    }
    // PUT, so asking again with the same name and spec returns the same value (the contract's idempotent bind).
    const answer = await this.expect(
      this.api.call('PUT', this.path('claims', name), {
        apiVersion: API_VERSION,
        kind: 'Claim',
        metadata: { name },
        spec,
      }),
      200,
      201,
    );
    let claim = answer.body;
    if (this.options.wait && allocatedOf(claim)?.status !== 'True')
      claim = await this.waitForClaim(name, this.options.namespace);
    this.io.out(claimLine(claim));
    return 0;
  }

  private prefixLength(): number {
    const text = this.options['prefix-length']!;
    if (!/^[0-9]{1,3}$/.test(text))
      throw new CliError(`--prefix-length must be an integer (got ${text})`, [], 2);
    return Number(text);
  }

  /** The next values claims made now would get: the pool's preview, one value a line. */
  async preview(args: string[]): Promise<number> {
    const [word, ...rest] = args;
    if (!word || rest.length)
      throw new CliError('usage: allot preview <pool> [--count N] [--prefix-length L]', [], 2);
    // A pool by name (any kind), or <kind>/<name>.
    const [kindText, poolName] = word.includes('/') ? word.split('/', 2) : [undefined, word];
    const kinds = kindText === undefined ? POOL_RESOURCES : resourcesOf(kindText);
    const resources = kinds.filter((resource) => POOL_RESOURCES.includes(resource as never));
    if (resources.length === 0 || !poolName)
      throw new CliError(`preview needs a pool: <name> or <kind>/<name> (got ${word})`, [], 2);
    const { resource } = await this.findOne(resources, poolName);
    const params = new URLSearchParams();
    if (this.options.count !== undefined) params.set('count', this.options.count);
    if (this.options['prefix-length'] !== undefined) params.set('prefixLength', String(this.prefixLength()));
    if (this.options.within !== undefined) params.set('within', this.options.within);
    if (this.options.reserved !== undefined) params.set('reserved', this.options.reserved);
    const query = params.size > 0 ? `?${params}` : '';
    const answer = await this.expect(
      this.api.call('GET', `${this.path(resource, poolName)}/preview${query}`),
      200,
    );
    const values: string[] = answer.body.values;
    if (values.length === 0) this.io.out(`${kindWord(resource)}/${poolName}: no value is free`);
    for (const value of values) this.io.out(value);
    return 0;
  }

  async release(args: string[]): Promise<number> {
    const [name, ...rest] = args;
    if (!name || rest.length) throw new CliError('usage: allot release <name>', [], 2);
    const answer = await this.expect(this.api.call('DELETE', this.path('claims', name)), 200);
    const claim = answer.body;
    const value = claim.status?.value;
    const ref = claim.spec.poolRef;
    if (value === undefined) {
      this.io.out(`claim/${name} released (it held no value)`);
      return 0;
    }
    const info = POOL_KINDS.find((p) => p.kind === ref.kind);
    const pool = info ? await this.api.call('GET', this.path(info.resource, ref.name)) : undefined;
    const policy = pool?.status === 200 ? pool.body.spec.reclaimPolicy : undefined;
    const fate =
      policy === 'Retain'
        ? `${value} stays with ${claim.status.allocationRef?.kind} ${claim.status.allocationRef?.name} (Retain)`
        : `${value} goes back to ${ref.kind} ${ref.name}`;
    this.io.out(`claim/${name} released: ${fate}`);
    return 0;
  }

  /**
   * Renews a lease claim's lease (POST …/renew). `--pool`: the claim must be of that pool (a script's
   * check that it renews what it means to), read first; nothing is renewed otherwise.
   */
  async renew(args: string[]): Promise<number> {
    const [name, ...rest] = args;
    if (!name || rest.length) throw new CliError('usage: allot renew <name> [--pool <kind>/<name>]', [], 2);
    if (this.options.pool !== undefined) {
      const want = await this.claimPool();
      const current = await this.expect(this.api.call('GET', this.path('claims', name)), 200);
      const ref = current.body.spec.poolRef;
      if (ref.kind !== want.kind || ref.name !== want.name)
        throw new CliError(`claim/${name} is of ${ref.kind} ${ref.name}, not ${want.kind} ${want.name}`);
    }
    const answer = await this.expect(this.api.call('POST', `${this.path('claims', name)}/renew`), 200);
    const claim = answer.body;
    const value = claim.status?.value;
    this.io.out(
      `claim/${name} renewed: its lease ends ${claim.status.leaseExpiresAt}${value === undefined ? '' : ` (holds ${value})`}`,
    );
    return 0;
  }

  /** One run of the namespace's repair sweep: a row per kind it found, with what it fixed. */
  async repair(args: string[]): Promise<number> {
    if (args.length) throw new CliError('usage: allot repair [-n NAMESPACE] [--dry-run]', [], 2);
    const dryRun = this.options['dry-run'];
    const path = `/v1/namespaces/${encodeURIComponent(this.options.namespace)}/repair`;
    const { body } = await this.expect(this.api.call('POST', `${path}${dryRun ? '?dryRun=true' : ''}`), 200);
    const found = body.found as Record<string, number>;
    const fixed = body.fixed as Record<string, number>;
    const kinds = Object.keys(found).filter((kind) => found[kind]! > 0);
    const columns: Column[] = [
      { header: 'KIND', value: (row) => String(row.kind) },
      { header: 'FOUND', value: (row) => String(row.found) },
      { header: 'FIXED', value: (row) => String(row.fixed) },
    ];
    if (kinds.length > 0)
      this.io.out(
        renderTable(
          columns,
          kinds.map((kind) => ({ kind, found: found[kind], fixed: fixed[kind] })),
        ),
      );
    const total = kinds.reduce((sum, kind) => sum + found[kind]!, 0);
    const done = kinds.reduce((sum, kind) => sum + fixed[kind]!, 0);
    const verdict =
      total === 0
        ? 'nothing to repair'
        : dryRun
          ? `${total} to repair (dry run: nothing changed)`
          : `${done} of ${total} repaired`;
    const rest = body.complete ? '' : '; the sweep stopped at its budget: run it again to go on';
    this.io.out(`namespace ${body.namespace}: ${verdict} (${body.requests} requests)${rest}`);
    return 0;
  }

  async delete(args: string[]): Promise<number> {
    const [word, name, ...rest] = args;
    if (!word || !name || rest.length)
      throw new CliError('usage: allot delete <resource> <name> [--cascade]', [], 2);
    const resources = resourcesOf(word);
    const { resource } = await this.findOne(resources, name);
    const cascade = this.options.cascade && POOL_RESOURCES.includes(resource as never) ? '?cascade=true' : '';
    await this.expect(this.api.call('DELETE', `${this.path(resource, name)}${cascade}`), 200);
    this.io.out(
      `${kindWord(resource)}/${name} deleted${cascade ? ' (with its allocation objects and their claims)' : ''}`,
    );
    return 0;
  }
}

function sameObject(before: Record<string, any>, after: Record<string, any>): boolean {
  const view = (o: Record<string, any>) =>
    JSON.stringify([o.spec, o.metadata?.labels ?? {}, o.metadata?.annotations ?? {}]);
  return view(before) === view(after);
}
