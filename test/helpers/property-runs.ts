/**
 * fast-check's parameters for the long property tests (the models, coalescing). Each run of real
 * interleavings takes seconds, so a failure's shrinking can take longer than the test may: CI once saw a
 * model time out mid-shrink with no seed to replay. So the seed is chosen here and printed before the
 * runs start, and the runs stop at a time budget below the test's timeout: a failure found by then is
 * reported with the smallest counterexample shrinking reached, and runs cut short by it still pass.
 *
 * `<PREFIX>_RUNS` (with `<PREFIX>_BUDGET_SECONDS`, 0 for none), `<PREFIX>_SEED` (with `<PREFIX>_PATH`) and
 * `<PREFIX>_NO_SHRINK=1` hunt longer, replay a reported failure, or report the first failing run as it came.
 */
import fc from 'fast-check';

export function propertyRuns<T>(
  name: string,
  { prefix = 'MODEL', numRuns, budgetMs = 420_000 }: { prefix?: string; numRuns: number; budgetMs?: number },
): fc.Parameters<T> {
  const env = (key: string) => process.env[`${prefix}_${key}`];
  const seed = env('SEED') ? Number(env('SEED')) : Math.floor(Math.random() * 2 ** 31);
  const budget = env('BUDGET_SECONDS') === undefined ? budgetMs : Number(env('BUDGET_SECONDS')) * 1000;
  console.log(`[property runs] ${name}: seed=${seed} (replay: ${prefix}_SEED=${seed})`);
  return {
    numRuns: Number(env('RUNS') ?? numRuns),
    seed,
    path: env('PATH'),
    endOnFailure: env('NO_SHRINK') === '1',
    plugins: budget > 0 ? [fc.interruptAfterTimeLimit(budget) as fc.Plugin<T>] : [],
  };
}
