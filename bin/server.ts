/**
 * `npm start`: Allot on http://127.0.0.1:$PORT (default 8080), data in $ALLOT_DATA_DIR (default
 * .allot-data/, `:memory:` for none), on the store $ALLOT_STORE chooses (lib/local/stores.ts: dynalite,
 * dynamodb-local or endpoint).
 *
 * A data folder another server holds, or a port in use: one line, exit code 1. Ctrl-C or SIGTERM: the
 * server stops within 3 s, whatever it was doing (lib/local/server.ts); a second signal stops it at once.
 */
import { DataFolderInUseError, DataLock } from '../lib/local/data-lock.ts';
import { PortUnavailableError } from '../lib/local/listener.ts';

// Node 20 is what this machine has; the pinned SDK supports it, so its upgrade notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// Read first: a launcher that goes while the server starts must still be seen to have gone (below).
const launcher = process.ppid;
const port = Number(process.env.PORT ?? 8080);
const dataDir = process.env.ALLOT_DATA_DIR ?? '.allot-data';

/** The errors a user can act on get their one line; anything else keeps its stack. */
function exitOn(error: unknown): never {
  if (error instanceof DataFolderInUseError || error instanceof PortUnavailableError) {
    console.error(`Allot: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

// The folder is taken before the rest is loaded, so a second server says so at once.
const lock = dataDir === ':memory:' ? undefined : await DataLock.acquire(dataDir).catch(exitOn);
const { STOP_BUDGET_MS, startLocalAllot } = await import('../lib/local/server.ts');
const allot = await startLocalAllot({ dataDir, port, lock }).catch(exitOn);
console.log(
  `Allot listening on ${allot.url} (data: ${dataDir === ':memory:' ? 'in memory' : dataDir}; store: ${allot.store.label})`,
);
console.log(`Console: ${allot.url}/`);

let stopping = false;
/** Stops within 3 s (lib/local/server.ts); asked again while stopping, stops at once, as a crash would. */
function stop(why: string): void {
  if (stopping) {
    allot.abort();
    console.error('Allot: stopped at once (what it had not applied is applied at the next start)');
    process.exit(1);
  }
  stopping = true;
  console.error(`Allot: stopping (${why})`);
  const by = Date.now() + STOP_BUDGET_MS;
  // Should the stop itself be held up past its budget, the process goes anyway, as a crash would.
  setTimeout(() => {
    allot.abort();
    console.error('Allot: stopped at once (the stop ran out of time)');
    process.exit(1);
  }, STOP_BUDGET_MS + 300);
  void allot.close({ by }).then(({ ms, abandoned }) => {
    const cut =
      abandoned.length > 0
        ? `; cut short: ${abandoned.join(', ')} (the next start finishes what they left)`
        : '';
    console.error(`Allot: stopped in ${ms} ms${cut}`);
    process.exit(0);
  });
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));

// Under `npm start`, a SIGTERM sent to npm reaches only the shell it runs the script in, which dies and
// leaves this process running with no one to stop it: a server whose launcher has gone stops as on SIGTERM.
if (process.env.npm_lifecycle_event === 'start') {
  setInterval(() => {
    if (process.ppid !== launcher && !stopping) stop('npm exited');
  }, 250).unref();
}
