/**
 * `npm start`: Allot on http://127.0.0.1:$PORT (default 8080), data in $ALLOT_DATA_DIR (default
 * .allot-data/, `:memory:` for none), on the store $ALLOT_STORE chooses (lib/local/stores.ts: dynalite,
 * dynamodb-local or endpoint).
 */
import { startLocalAllot } from '../lib/local/server.ts';

// Node 20 is what this machine has; the pinned SDK supports it, so its upgrade notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const port = Number(process.env.PORT ?? 8080);
const dataDir = process.env.ALLOT_DATA_DIR ?? '.allot-data';

const allot = await startLocalAllot({ dataDir, port });
console.log(
  `Allot listening on ${allot.url} (data: ${dataDir === ':memory:' ? 'in memory' : dataDir}; store: ${allot.store.label})`,
);
console.log(`Console: ${allot.url}/`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void allot.close().then(() => process.exit(0));
  });
}
