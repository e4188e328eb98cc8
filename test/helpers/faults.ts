/**
 * Fault injection for the real AWS SDK, as middleware on one DynamoDB client (no SDK mocks):
 *
 * - throttling (`ProvisionedThroughputExceededException`, `ThrottlingException`) and timeouts before the
 *   request reaches the store: nothing is applied, and the SDK's retry strategy retries them;
 * - a write that is applied but whose answer is lost (a timeout after the store committed it): the SDK
 *   retries it, so the write runs twice and the second run may see its own first run;
 * - a handler that dies between two of its DynamoDB calls: from a chosen call on, every call of that
 *   client fails with an error nothing retries, so the rest of the invocation never happens.
 *
 * The SDK classifies the injected errors the way it classifies real ones (by name), and `quickRetries`
 * keeps its retry policy (throttling and transient errors, bounded attempts) without the back-off delays.
 */
import {
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';

export type FaultKind = 'throttle' | 'timeout' | 'lostAnswer' | 'died';

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

/** A small seeded generator (mulberry32), so a fast-check seed replays the same faults. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The error a dead handler's remaining calls fail with: not an SDK error, so nothing retries it. */
export class HandlerDiedError extends Error {
  override readonly name = 'HandlerDiedError';
}

function retryableError(kind: 'throttle' | 'timeout' | 'lostAnswer', random: () => number): Error {
  const metadata = { $metadata: {} };
  if (kind === 'throttle') {
    return random() < 0.5
      ? new ProvisionedThroughputExceededException({ message: 'injected throttling', ...metadata })
      : Object.assign(new Error('injected throttling'), {
          name: 'ThrottlingException',
          $fault: 'client',
          ...metadata,
        });
  }
  const message = kind === 'timeout' ? 'injected timeout' : 'injected timeout after the write was applied';
  return Object.assign(new Error(message), { name: 'TimeoutError', ...metadata });
}

/**
 * The SDK's standard policy (retry throttling and transient errors, `maxAttempts` in all) with no delay:
 * the same retries, in test time.
 */
export function quickRetries(maxAttempts = 3) {
  const token = (count: number) => ({ getRetryCount: () => count, getRetryDelay: () => 0 });
  return {
    mode: 'standard',
    acquireInitialRetryToken: async () => token(0),
    refreshRetryTokenForRetry: async (
      previous: ReturnType<typeof token>,
      info: { errorType: string; error?: unknown },
    ) => {
      const retryable = info.errorType === 'THROTTLING' || info.errorType === 'TRANSIENT';
      if (!retryable || previous.getRetryCount() + 1 >= maxAttempts)
        throw info.error ?? new Error('no retry');
      return token(previous.getRetryCount() + 1);
    },
    recordSuccess: () => undefined,
  };
}

/** Faults for one client. `rate` is the chance that any one attempt fails (0 turns faults off). */
export class Faults {
  rate = 0;
  readonly injected: Record<FaultKind, number> = { throttle: 0, timeout: 0, lostAnswer: 0, died: 0 };
  /** Every DynamoDB call this client issued, by operation (for least-privilege and isolation checks). */
  readonly calls: { operation: string; input: Record<string, unknown> }[] = [];
  record = false;
  /** Runs before each call goes out (a test's way to make something happen at an exact point). */
  beforeCall?: (operation: string, input: Record<string, unknown>) => Promise<void> | void;
  /** Picks a fault for one attempt before chance does (a test's way to inject one exact fault). */
  plan?: (operation: string, input: Record<string, unknown>) => Exclude<FaultKind, 'died'> | undefined;
  private callsBeforeDeath?: number;
  private dead = false;

  constructor(private readonly random: () => number) {}

  get total(): number {
    return Object.values(this.injected).reduce((sum, n) => sum + n, 0);
  }

  /** The handler dies just before its `calls`-th next DynamoDB call (1 = before the first). */
  dieBeforeCall(calls: number): void {
    this.callsBeforeDeath = calls;
  }

  /** Whether the armed death happened; clears it, so the next invocation starts alive. */
  revive(): boolean {
    const died = this.dead;
    this.dead = false;
    this.callsBeforeDeath = undefined;
    return died;
  }

  attach(client: DynamoDBClient): DynamoDBClient {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName ?? '').replace(/Command$/, '');
        const input = args.input as Record<string, unknown>;
        if (this.record) this.calls.push({ operation, input });
        await this.beforeCall?.(operation, input);
        if (this.callsBeforeDeath !== undefined && --this.callsBeforeDeath <= 0 && !this.dead) {
          this.dead = true;
          this.injected.died++;
        }
        if (this.dead) throw new HandlerDiedError(`the handler died before ${operation}`);
        return next(args);
      },
      { step: 'initialize', name: 'injectDeath', priority: 'high' },
    );
    // Inside the retry middleware: each attempt may fail on its own, and the SDK decides whether to retry.
    const injectFaults =
      (next: (args: any) => Promise<any>, context: { commandName?: string }) => async (args: any) => {
        const operation = String(context.commandName ?? '').replace(/Command$/, '');
        const planned = this.plan?.(operation, args.input);
        if (planned || (this.rate > 0 && this.random() < this.rate)) {
          const roll = this.random();
          const kind =
            planned ??
            (roll < 0.3 ? 'throttle' : roll < 0.5 || !WRITES.has(operation) ? 'timeout' : 'lostAnswer');
          if (kind !== 'lostAnswer') {
            this.injected[kind]++;
            throw retryableError(kind, this.random);
          }
          await next(args); // applied; then the answer is lost on the way back
          this.injected.lostAnswer++;
          throw retryableError(kind, this.random);
        }
        return next(args);
      };
    client.middlewareStack.addRelativeTo(injectFaults as never, {
      relation: 'after',
      toMiddleware: 'retryMiddleware',
      name: 'injectFaults',
    });
    return client;
  }
}

/** A client for the local store with faults attached and the SDK's retry policy without delays. */
export function faultyClient(endpoint: string, faults: Faults, config: DynamoDBClientConfig = {}) {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    retryStrategy: quickRetries(3) as never,
    ...config,
  });
  return faults.attach(client);
}
