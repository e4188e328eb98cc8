/**
 * kubectl as people use it every day (issue 26), the real kubectl against Allot: `get -w` shows a claim
 * another client makes, its change to Allocated and its deletion; `wait --for=condition=…` and
 * `wait --for=delete` with no error line; `get -l`, `--field-selector`, `-A`, `version`; and, against a
 * server that answers every watch as the deployed API's long polls and ends each within 2 s, a
 * `kubectl wait` whose watch outlives several answers and still sees every change once, in order.
 *
 * What kubectl does when a watch answer ends (checked here, not assumed): `kubectl get -w` stops
 * (kubectl's UntilWithoutRetry); `kubectl wait` watches again from the last resourceVersion (client-go's
 * informer, as every controller does).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { startSigningProxy } from '../../lib/cli/proxy.ts';
import { haveKubectl, kubectlFor, requireKubectl, type Kubectl } from './support.ts';

requireKubectl('test/kubectl/watch.test.ts');

const GROUP = 'pool.networking.metal.ironcore.dev';
const KUBE = `/apis/${GROUP}/v1alpha1`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds, polling (kubectl's output comes when it comes). */
async function until(check: () => boolean, ms = 20_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await sleep(50))
    if (Date.now() > deadline) throw new Error('waited too long');
}

/** A table's rows as words. */
const rows = (table: string) =>
  table
    .trimEnd()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));

describe.runIf(haveKubectl)('kubectl watches, waits and selects against Allot', () => {
  let allot: LocalAllot;
  let kubectl: Kubectl;
  const api = () => client(allot.url, 'default');

  /** The watches asked of the server, in order (kubectl lists, then watches from the list's version). */
  const watchesAsked: string[] = [];
  /** Waits until kubectl, started after `before` watches were asked, watches claims: it has listed by then. */
  const kubectlWatching = (before: number) =>
    until(() => watchesAsked.slice(before).some((url) => url.includes('/claims')));

  beforeAll(async () => {
    allot = await startTestAllot({ watch: { onStart: (url) => watchesAsked.push(url) } });
    kubectl = await kubectlFor(allot.url);
    await api().post('indexpools', { metadata: { name: 'vlans' }, spec: { ranges: ['100..199'] } });
    await api().post('claims', {
      metadata: { name: 'tor1', labels: { team: 'fabric' } },
      spec: { poolRef: { kind: 'IndexPool', name: 'vlans' } },
    });
    await api().post('claims', {
      metadata: { name: 'tor2', labels: { team: 'edge' } },
      spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
    });
    await client(allot.url, 'lab').post('claims', {
      metadata: { name: 'bench' },
      spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
    });
    await allot.history?.drained();
  });
  afterAll(async () => {
    await kubectl?.close();
    await allot?.close();
  });

  it('get -w shows a claim another client makes, its change to Allocated, and its deletion', async () => {
    const watching = kubectl.start(['get', 'claims', '-w', '--output-watch-events', '--request-timeout=8s']);
    // The list is printed first; the watch goes on from its resourceVersion.
    await until(() => watching.stdout().includes('tor2'));
    await api().post('claims', {
      metadata: { name: 'new1' },
      spec: { poolRef: { kind: 'IndexPool', name: 'vlans' } },
    });
    await until(() => watching.stdout().includes('Allocated') && /MODIFIED\s+new1/.test(watching.stdout()));
    await api().delete('claims/new1');
    await until(() => /DELETED\s+new1/.test(watching.stdout()));
    watching.stop();
    const result = await watching.done;
    const table = rows(result.stdout);
    expect(table[0]).toEqual(['EVENT', 'NAME', 'POOL', 'VALUE', 'ALLOCATED', 'REASON', 'AGE']);
    expect(table.slice(1, 3).map((row) => row.slice(0, 2))).toEqual([
      ['ADDED', 'tor1'],
      ['ADDED', 'tor2'],
    ]);
    // Each row without its AGE.
    expect(table.slice(3).map((row) => row.slice(0, -1))).toEqual([
      ['ADDED', 'new1', 'vlans', 'Unknown', 'Allocating'],
      ['MODIFIED', 'new1', 'vlans', '101', 'True', 'Allocated'],
      ['DELETED', 'new1', 'vlans', '101', 'True', 'Allocated'],
    ]);
    expect(result.stderr).toBe('');
  });

  it('wait --for=condition=Allocated sees a waiting claim allocated, with no error line', async () => {
    await api().post('claims', {
      metadata: { name: 'late' },
      spec: { poolRef: { kind: 'IndexPool', name: 'later' } },
    });
    const asked = watchesAsked.length;
    const waiting = kubectl.start(['wait', '--for=condition=Allocated', 'claim/late', '--timeout=30s']);
    await kubectlWatching(asked);
    await api().post('indexpools', { metadata: { name: 'later' }, spec: { ranges: ['1..5'] } });
    expect(await waiting.done).toEqual({
      code: 0,
      stdout: `claim.${GROUP}/late condition met\n`,
      stderr: '',
    });
  });

  it('wait --for=delete ends when another client deletes the claim', async () => {
    await api().post('claims', {
      metadata: { name: 'gone' },
      spec: { poolRef: { kind: 'IndexPool', name: 'vlans' } },
    });
    const asked = watchesAsked.length;
    const waiting = kubectl.start(['wait', '--for=delete', 'claim/gone', '--timeout=30s']);
    await kubectlWatching(asked);
    await api().delete('claims/gone');
    expect(await waiting.done).toEqual({
      code: 0,
      stdout: `claim.${GROUP}/gone condition met\n`,
      stderr: '',
    });
  });

  it('get -l selects with Kubernetes’ grammar, and says what is wrong with a malformed selector', async () => {
    const names = async (args: string[]) => {
      const result = await kubectl.run(['get', 'claims', ...args, '-o', 'name']);
      expect(result.code, result.stderr).toBe(0);
      return result.stdout.trim().split('\n').filter(Boolean);
    };
    expect(await names(['-l', 'team=fabric'])).toEqual([`claim.${GROUP}/tor1`]);
    expect(await names(['-l', 'team in (fabric,edge)'])).toEqual([
      `claim.${GROUP}/tor1`,
      `claim.${GROUP}/tor2`,
    ]);
    expect(await names(['-l', 'team!=fabric'])).toContain(`claim.${GROUP}/tor2`);
    expect(await names(['-l', '!team'])).not.toContain(`claim.${GROUP}/tor1`);
    const bad = await kubectl.run(['get', 'claims', '-l', 'team in fabric']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("unable to parse requirement: found 'fabric' expected: '('");
  });

  it('--field-selector selects on the fields served, and names them for any other', async () => {
    const waiting = await kubectl.run([
      'get',
      'claims',
      '--field-selector',
      'status.phase=Waiting',
      '-o',
      'name',
    ]);
    expect(waiting.stdout).toBe(`claim.${GROUP}/tor2\n`);
    const byPool = await kubectl.run([
      'get',
      'claims',
      '--field-selector',
      'spec.poolRef.name=vlans,metadata.name!=tor9',
      '-o',
      'name',
    ]);
    expect(byPool.stdout.split('\n')).toContain(`claim.${GROUP}/tor1`);
    const other = await kubectl.run(['get', 'claims', '--field-selector', 'spec.value=1']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(
      'field label not supported: spec.value; the fields served are metadata.name, metadata.namespace, spec.poolRef.name, status.phase',
    );
  });

  it('get -A lists every namespace, with a NAMESPACE column, paged', async () => {
    const result = await kubectl.run(['get', 'claims', '-A', '--chunk-size=1']);
    expect(result.code, result.stderr).toBe(0);
    const table = rows(result.stdout);
    expect(table[0]!.slice(0, 2)).toEqual(['NAMESPACE', 'NAME']);
    expect(table.slice(1).map((row) => row.slice(0, 2))).toEqual(
      expect.arrayContaining([
        ['default', 'tor1'],
        ['default', 'tor2'],
        ['lab', 'bench'],
      ]),
    );
    const labels = await kubectl.run(['get', 'claims', '-A', '-l', 'team=edge', '-o', 'name']);
    expect(labels.stdout).toBe(`claim.${GROUP}/tor2\n`);
  });

  it('version shows the server’s version and exits 0', async () => {
    const result = await kubectl.run(['version']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Server Version: v\d+\.\d+\.\d+$/m);
  });
});

describe.runIf(haveKubectl)(
  'kubectl against a server that ends every watch answer early (2 s, as long polls)',
  () => {
    let allot: LocalAllot;
    let kubectl: Kubectl;
    const answers: { url: URL; events: { type: string; object: any }[] }[] = [];
    const asked: URL[] = [];
    const ofStepper = (url: URL) => url.searchParams.get('fieldSelector') === 'metadata.name=stepper';
    const stepperAsked = () => asked.filter(ofStepper).length;
    const stepperAnswered = () => answers.filter((answer) => ofStepper(answer.url)).length;

    beforeAll(async () => {
      allot = await startTestAllot({
        watch: {
          longPoll: true,
          answerMs: 2_000,
          onStart: (url) => asked.push(new URL(url, 'http://x')),
          onAnswer: (url, lines) =>
            answers.push({ url: new URL(url, 'http://x'), events: lines.map((line) => JSON.parse(line)) }),
        },
      });
      kubectl = await kubectlFor(allot.url);
      await client(allot.url).post('indexpools', { metadata: { name: 'p' }, spec: { ranges: ['1..9'] } });
      await client(allot.url).post('claims', {
        metadata: { name: 'stepper' },
        spec: { poolRef: { kind: 'IndexPool', name: 'p' } },
      });
      // Once the history has it: a change younger than the history's delay may come again (docs/kubectl.md).
      await allot.history?.drained();
    });
    afterAll(async () => {
      await kubectl?.close();
      await allot?.close();
    });

    it('kubectl wait watches again from the last resourceVersion after each answer, and sees every change once, in order', async () => {
      const waiting = kubectl.start([
        'wait',
        '--for=jsonpath={.metadata.labels.step}=6',
        'claim/stepper',
        '--timeout=60s',
      ]);
      for (let step = 1; step <= 6; step++) {
        // Each change while kubectl has a watch waiting, and the next once that watch's answer is out:
        // kubectl must watch again for every step.
        await until(() => stepperAsked() > stepperAnswered());
        const answered = stepperAnswered();
        await client(allot.url).call(
          'PATCH',
          `${KUBE}/namespaces/default/claims/stepper`,
          JSON.stringify({ metadata: { labels: { step: String(step) } } }),
          { 'content-type': 'application/merge-patch+json' },
        );
        await until(() => stepperAnswered() > answered);
      }
      expect(await waiting.done).toEqual({
        code: 0,
        stdout: `claim.${GROUP}/stepper condition met\n`,
        stderr: '',
      });
      const watches = answers.filter(
        (answer) => answer.url.searchParams.get('fieldSelector') === 'metadata.name=stepper',
      );
      // It outlived several answers: each ended (after its first events, or at 2 s) and kubectl watched again.
      expect(watches.length).toBeGreaterThanOrEqual(4);
      // Each watch starts where the one before left off: its last event's, or bookmark's, resourceVersion.
      for (let i = 1; i < watches.length; i++) {
        const before = watches[i - 1]!.events;
        if (before.length === 0) continue;
        expect(watches[i]!.url.searchParams.get('resourceVersion'), `watch ${i}`).toBe(
          before[before.length - 1]!.object.metadata.resourceVersion,
        );
      }
      const steps = watches
        .flatMap((answer) => answer.events)
        .filter((event) => event.type === 'MODIFIED')
        .map((event) => event.object.metadata.labels.step);
      expect(steps).toEqual(['1', '2', '3', '4', '5', '6']);
    });

    it('kubectl get -w through allot proxy goes on over several answers: the proxy watches again for it', async () => {
      const proxy = await startSigningProxy({ endpoint: allot.url, port: 0, sign: false });
      const through = await kubectlFor(proxy.url);
      try {
        const watching = through.start([
          'get',
          'claims',
          '-w',
          '--output-watch-events',
          '--request-timeout=9s',
        ]);
        await until(() => watching.stdout().includes('stepper'));
        for (const team of ['a', 'b']) {
          // Each change after an answer has ended (at its 2 s, or with the change before): the proxy
          // must have watched again for kubectl.
          const ended = answers.length;
          await until(() => answers.length > ended);
          await client(allot.url).call(
            'PATCH',
            `${KUBE}/namespaces/default/claims/stepper`,
            JSON.stringify({ metadata: { labels: { team } } }),
            { 'content-type': 'application/merge-patch+json' },
          );
        }
        const result = await watching.done;
        expect(result.code, result.stderr).toBe(0);
        expect(rows(result.stdout).map((row) => row.slice(0, 2))).toEqual([
          ['EVENT', 'NAME'],
          ['ADDED', 'stepper'],
          ['MODIFIED', 'stepper'],
          ['MODIFIED', 'stepper'],
        ]);
      } finally {
        await through.close();
        await proxy.close();
      }
    });

    it('kubectl get -w stops when its watch answer ends (kubectl does not watch again), exit 0', async () => {
      // (kubectl.run kills what runs past 30 s: an exit 0 is kubectl ending on its own.)
      const result = await kubectl.run(['get', 'claims', '-w']);
      expect(result.code, result.stderr).toBe(0);
      expect(rows(result.stdout)[1]![0]).toBe('stepper');
    });
  },
);
