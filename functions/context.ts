/** The context a handler instance works in: its table (from TABLE_NAME unless given) and its own memory. */
import type { ClaimContext } from '../lib/claims.ts';
import { Table } from '../lib/table.ts';

/** Builds the context on first use, so importing a handler touches no AWS client. */
export function lazyContext(given?: Partial<ClaimContext>): () => ClaimContext {
  let ctx: ClaimContext | undefined;
  return () =>
    (ctx ??= {
      table: given?.table ?? new Table({ tableName: process.env.TABLE_NAME ?? 'allot' }),
      frontiers: new Map(),
      ...given,
    });
}
