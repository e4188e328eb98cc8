/**
 * `?watch=true` on the local server (api.md, "Routes", watch; lib/service/operations/watch.ts): the
 * changes after a list's resourceVersion, as they happen, one JSON line each, with the whole object; a
 * resume from any event's resourceVersion; selectors (an object that stops matching is a DELETED, one
 * that starts is an ADDED, as in Kubernetes); bookmarks; 410 Expired; and the long polls a deployed API
 * answers, through a server that answers them as the deployed API does.
 */
import '../helpers/quiet.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HISTORY_RETENTION_MS } from '../../lib/service/history/changes.ts';
import { watchCollection } from '../../lib/service/operations/watch.ts';
import { client, startTestAllot, useTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';

const { allot, api } = useTestAllot();
const KUBE = '/apis/pool.networking.metal.ironcore.dev/v1alpha1';

interface WatchEvent {
  type: string;
  object: Record<string, any>;
}

/**
 * Opens a watch and collects its events until `until` says enough (or `ms` pass, or the answer ends);
 * the watch is then closed, as a client that stops watching closes it.
 */
function watch(
  url: string,
  options: { until?: (events: WatchEvent[]) => boolean; ms?: number; headers?: Record<string, string> } = {},
) {
  let opened!: () => void;
  const answered = new Promise<void>((resolve) => (opened = resolve));
  return Object.assign(collect(url, options, opened), { opened: answered });
}

/** Resolves `opened` once the answer's head is in: the server is watching from then on. */
async function collect(
  url: string,
  options: { until?: (events: WatchEvent[]) => boolean; ms?: number; headers?: Record<string, string> },
  opened: () => void,
): Promise<{ status: number; events: WatchEvent[]; ended: boolean; body?: any }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), options.ms ?? 10_000);
  const events: WatchEvent[] = [];
  try {
    const response = await fetch(url, { signal: abort.signal, headers: options.headers });
    opened();
    if (response.status !== 200)
      return { status: response.status, events, ended: true, body: await response.json() };
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      if (options.until?.(events)) return { status: 200, events, ended: false };
      let chunk;
      try {
        chunk = await reader.read();
      } catch {
        return { status: 200, events, ended: false };
      }
      if (chunk.done) return { status: 200, events, ended: true };
      buffer += decoder.decode(chunk.value, { stream: true });
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        if (line.trim()) events.push(JSON.parse(line) as WatchEvent);
      }
    }
  } finally {
    opened();
    clearTimeout(timer);
    abort.abort();
  }
}

const ns = () => client(allot.url, 'watching');
const claimsUrl = (query: string, namespace = 'watching') =>
  `${allot.url}/v1/namespaces/${namespace}/claims?${query}`;
const versionOf = (event: WatchEvent) => Number(event.object.metadata.resourceVersion);
const summary = (event: WatchEvent) =>
  `${event.type} ${event.object.metadata?.name} ${event.object.status?.conditions?.[0]?.reason ?? ''}`.trim();

beforeAll(async () => {
  await ns().post('indexpools', { metadata: { name: 'pool' }, spec: { ranges: ['1..100'] } });
});

describe('a watch from a list', () => {
  let events: WatchEvent[];
  let listed: number;

  beforeAll(async () => {
    listed = Number((await ns().get('claims')).body.metadata.resourceVersion);
    const watching = watch(claimsUrl(`watch=true&resourceVersion=${listed}`), {
      until: (seen) => seen.some((event) => event.type === 'DELETED'),
    });
    await watching.opened;
    await ns().post('claims', {
      metadata: { name: 'w1' },
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
    });
    await api.call(
      'PATCH',
      `${KUBE}/namespaces/watching/claims/w1`,
      JSON.stringify({ metadata: { labels: { a: 'b' } } }),
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    await ns().delete('claims/w1');
    ({ events } = await watching);
  });

  it('sees a claim made by another client, its change to Allocated, its labels, its deletion, in order', () => {
    expect(events.map(summary)).toEqual([
      'ADDED w1 Allocating',
      'MODIFIED w1 Allocated',
      'MODIFIED w1 Allocated',
      'DELETED w1 Allocated',
    ]);
    expect(events[1]!.object).toMatchObject({
      apiVersion: 'pool.networking.metal.ironcore.dev/v1alpha1',
      kind: 'Claim',
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
      status: { value: '1' },
    });
    expect(events[2]!.object.metadata.labels).toEqual({ a: 'b' });
  });

  it('gives each event a resourceVersion after the list’s, increasing', () => {
    const versions = events.map(versionOf);
    expect(versions[0]).toBeGreaterThan(listed);
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    expect(new Set(versions).size).toBe(versions.length);
  });

  it('resumed from any event’s resourceVersion, answers exactly the events after it', async () => {
    for (let i = 0; i < events.length; i++) {
      const rest = await watch(
        claimsUrl(`watch=true&resourceVersion=${versionOf(events[i]!)}&timeoutSeconds=1`),
      );
      expect(rest.events.map(summary), `after event ${i}`).toEqual(events.slice(i + 1).map(summary));
    }
  });

  it('starts with the objects as they are when asked from no resourceVersion (or 0)', async () => {
    await ns().post('claims', {
      metadata: { name: 'w2' },
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
    });
    // Once the history has the claim: a change younger than its delay may come again (docs/kubectl.md).
    await allot.history!.drained();
    for (const version of ['', '&resourceVersion=0']) {
      const first = await watch(claimsUrl(`watch=true${version}&timeoutSeconds=1`));
      expect(first.events.map(summary)).toEqual(['ADDED w2 Allocated']);
    }
  });
});

describe('a watch with selectors', () => {
  it('sees an object that stops matching as DELETED (as it was) and one that starts as ADDED', async () => {
    const listed = (await ns().get('claims?labelSelector=team%3Dfabric')).body.metadata.resourceVersion;
    const watching = watch(claimsUrl(`watch=true&resourceVersion=${listed}&labelSelector=team%3Dfabric`), {
      until: (seen) => seen.length >= 4,
    });
    await watching.opened;
    const patch = (labels: Record<string, string>) =>
      api.call('PATCH', `${KUBE}/namespaces/watching/claims/sel`, JSON.stringify({ metadata: { labels } }), {
        'content-type': 'application/merge-patch+json',
      });
    await ns().put('claims/sel', {
      metadata: { labels: { team: 'fabric' } },
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
    });
    await patch({ team: 'edge' });
    await patch({ team: 'fabric' });
    const { events } = await watching;
    // Made (Allocating), allocated, moved out of the selection (DELETED, as it was), back in (ADDED).
    expect(events.map((event) => `${event.type} ${event.object.metadata.labels.team}`)).toEqual([
      'ADDED fabric',
      'MODIFIED fabric',
      'DELETED fabric',
      'ADDED fabric',
    ]);
    expect(versionOf(events[2]!)).toBeGreaterThan(versionOf(events[1]!));
  });

  it('selects on status.phase: a claim is ADDED once it is Allocated', async () => {
    // From a list's resourceVersion, so the claim's changes all come after the watch's start.
    const listed = (await ns().get('claims')).body.metadata.resourceVersion;
    const watching = watch(
      claimsUrl(
        `watch=true&resourceVersion=${listed}&fieldSelector=status.phase%3DAllocated,metadata.name%3Dphased`,
      ),
      {
        until: (seen) => seen.length >= 1,
      },
    );
    await watching.opened;
    await ns().post('claims', {
      metadata: { name: 'phased' },
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
    });
    expect((await watching).events.map(summary)).toEqual(['ADDED phased Allocated']);
  });

  it('ends with a BOOKMARK past the events it left out, when asked', async () => {
    const listed = Number((await ns().get('claims')).body.metadata.resourceVersion);
    await ns().post('claims', {
      metadata: { name: 'unseen' },
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
    });
    await allot.history!.drained();
    const answer = await watch(
      claimsUrl(
        `watch=true&resourceVersion=${listed}&labelSelector=nobody&allowWatchBookmarks=true&timeoutSeconds=1`,
      ),
    );
    expect(answer.events.map((event) => event.type)).toEqual(['BOOKMARK']);
    const bookmark = answer.events[0]!;
    expect(bookmark.object).toEqual({
      kind: 'Claim',
      apiVersion: 'pool.networking.metal.ironcore.dev/v1alpha1',
      metadata: { resourceVersion: expect.stringMatching(/^\d+$/) },
    });
    expect(versionOf(bookmark)).toBeGreaterThan(listed);
    const after = await watch(
      claimsUrl(`watch=true&resourceVersion=${versionOf(bookmark)}&timeoutSeconds=1`),
    );
    expect(after.events).toEqual([]);
  });

  it('watches allocation objects with their Valid condition', async () => {
    const listed = (await ns().get('indices')).body.metadata.resourceVersion;
    const watching = watch(
      `${allot.url}/v1/namespaces/watching/indices?watch=true&resourceVersion=${listed}`,
      {
        until: (seen) => seen.some((event) => event.object.metadata.name === 'pool-77'),
      },
    );
    await watching.opened;
    await ns().post('indices', {
      metadata: { name: 'pool-77' },
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' }, index: 77 },
    });
    const event = (await watching).events.find((seen) => seen.object.metadata.name === 'pool-77')!;
    expect(event).toMatchObject({
      type: 'ADDED',
      object: {
        kind: 'Index',
        spec: { index: 77 },
        status: { conditions: [{ type: 'Valid', status: 'True' }] },
      },
    });
  });
});

describe('a long poll of a backlog', () => {
  it('ends an answer at its size limit after a whole event; the next answer goes on from its last', async () => {
    const bulk = client(allot.url, 'bulk');
    await bulk.post('indexpools', { metadata: { name: 'pool' }, spec: { ranges: ['1..50'] } });
    const listed = Number((await bulk.get('claims')).body.metadata.resourceVersion);
    for (let i = 0; i < 6; i++)
      await bulk.post('claims', {
        metadata: { name: `b${i}` },
        spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
      });
    await allot.history!.drained();
    const answer = async (from: number) => {
      const lines: string[] = [];
      await watchCollection(
        'claims',
        {
          params: { namespace: 'bulk' },
          query: { watch: 'true', resourceVersion: String(from) },
          body: undefined,
        },
        { table: allot.table },
        {
          write: (line) => lines.push(line),
          endAfterEvents: true,
          maxMs: 2_000,
          pollMs: 50,
          maxBytes: 2_000,
        },
      );
      return lines.map((line) => JSON.parse(line) as WatchEvent);
    };
    const seen: WatchEvent[] = [];
    for (let from = listed, answers = 0; seen.length < 12; answers++) {
      expect(answers).toBeLessThan(12);
      const events = await answer(from);
      // Each answer stops once 2,000 bytes are out: a claim's events are some 600 bytes each.
      expect(events.length).toBeLessThanOrEqual(4);
      seen.push(...events);
      from = versionOf(events[events.length - 1]!);
    }
    for (let i = 0; i < 6; i++)
      expect(seen.map(summary).filter((line) => line.split(' ')[1] === `b${i}`)).toEqual([
        `ADDED b${i} Allocating`,
        `MODIFIED b${i} Allocated`,
      ]);
    expect(new Set(seen.map(versionOf)).size).toBe(12);
  });
});

describe('what a watch refuses', () => {
  it('answers 410 Expired from a resourceVersion older than the history keeps, and from one it never had', async () => {
    await ns().post('claims', {
      metadata: { name: 'old' },
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
    });
    await allot.history!.drained();
    const first = (await watch(claimsUrl('watch=true&timeoutSeconds=1&resourceVersion=999'))).events;
    expect(first.length).toBeGreaterThan(0);
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => now + HISTORY_RETENTION_MS + 60_000);
    try {
      const expired = await watch(claimsUrl('watch=true&resourceVersion=999'));
      expect(expired.status).toBe(410);
      expect(expired.body).toMatchObject({
        kind: 'Status',
        code: 410,
        reason: 'Expired',
        message: expect.stringContaining('too old resource version: 999'),
      });
    } finally {
      clock.mockRestore();
    }
    const future = await watch(claimsUrl('watch=true&resourceVersion=99999999999'));
    expect(future.body).toMatchObject({
      code: 410,
      reason: 'Expired',
      message: expect.stringContaining('newer than this history'),
    });
  });

  it('answers 400 for a malformed parameter, and for a watch across every namespace', async () => {
    for (const query of [
      'watch=maybe',
      'watch=true&resourceVersion=abc',
      'watch=true&timeoutSeconds=-1',
      'watch=true&allowWatchBookmarks=yes',
      'watch=true&sendInitialEvents=true',
      'watch=true&resourceVersionMatch=NotOlderThan',
      'watch=true&labelSelector=a%20b',
    ]) {
      const answer = await watch(claimsUrl(query));
      expect(answer.status, query).toBe(400);
      expect(answer.body.reason, query).toBe('BadRequest');
    }
    const everywhere = await watch(`${allot.url}${KUBE}/claims?watch=true`);
    expect(everywhere.status).toBe(400);
    expect(everywhere.body.message).toContain('per namespace');
  });
});

describe('for kubectl get -w', () => {
  it('answers each event as a Table of its one row when the client asks for Tables', async () => {
    const listed = (await api.get(`${KUBE}/namespaces/watching/claims`)).body.metadata.resourceVersion;
    const watching = watch(
      `${allot.url}${KUBE}/namespaces/watching/claims?watch=true&resourceVersion=${listed}`,
      {
        headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
        until: (seen) => seen.length >= 2,
      },
    );
    await watching.opened;
    await ns().post('claims', {
      metadata: { name: 'tabled' },
      spec: { poolRef: { kind: 'IndexPool', name: 'pool' } },
    });
    const { events } = await watching;
    expect(events[1]).toMatchObject({
      type: 'MODIFIED',
      object: { kind: 'Table', rows: [{ object: { metadata: { name: 'tabled' } } }] },
    });
    expect(events[1]!.object.rows).toHaveLength(1);
    expect(events[1]!.object.rows[0].cells.slice(0, 5)).toEqual([
      'tabled',
      'pool',
      expect.any(String),
      'True',
      'Allocated',
    ]);
    expect(
      events[1]!.object.columnDefinitions.map((column: { name: string }) => column.name).slice(0, 2),
    ).toEqual(['Name', 'Pool']);
  });
});

describe('a server that answers watches as long polls (the deployed API), ending each within 2 s', () => {
  let polled: LocalAllot;
  beforeAll(async () => {
    polled = await startTestAllot({ watch: { longPoll: true, answerMs: 2_000 } });
    await client(polled.url, 'lp').post('indexpools', {
      metadata: { name: 'pool' },
      spec: { ranges: ['1..10'] },
    });
  });
  afterAll(() => polled.close());

  it('ends an answer after its first events; the next, from the last resourceVersion, has the rest, each once', async () => {
    const lp = client(polled.url, 'lp');
    let version = Number((await lp.get('claims')).body.metadata.resourceVersion);
    for (const name of ['a', 'b', 'c'])
      await lp.post('claims', { metadata: { name }, spec: { poolRef: { kind: 'IndexPool', name: 'pool' } } });
    await polled.history!.drained();
    const seen: string[] = [];
    for (let answers = 0; seen.length < 6; answers++) {
      expect(answers).toBeLessThan(10);
      const answer = await watch(
        `${polled.url}/v1/namespaces/lp/claims?watch=true&resourceVersion=${version}`,
      );
      expect(answer.ended).toBe(true);
      seen.push(...answer.events.map(summary));
      if (answer.events.length > 0) version = versionOf(answer.events[answer.events.length - 1]!);
    }
    // Each claim's changes once, in order; the claims' among each other in the history's order.
    for (const name of ['a', 'b', 'c'])
      expect(
        seen.filter((line) => line.split(' ')[1] === name),
        name,
      ).toEqual([`ADDED ${name} Allocating`, `MODIFIED ${name} Allocated`]);
    expect(seen).toHaveLength(6);
  });

  it('ends an idle answer empty at its time, bookmarks asked for or not (it got nowhere new)', async () => {
    const version = (await client(polled.url, 'lp').get('claims')).body.metadata.resourceVersion;
    const idle = await watch(`${polled.url}/v1/namespaces/lp/claims?watch=true&resourceVersion=${version}`);
    expect(idle).toMatchObject({ status: 200, ended: true, events: [] });
    const marked = await watch(
      `${polled.url}/v1/namespaces/lp/claims?watch=true&resourceVersion=${version}&allowWatchBookmarks=true&labelSelector=x`,
    );
    expect(marked.events.map((event) => event.type)).toEqual([]);
  });
});
