/**
 * The figures issue 5 asks the test run to print (docs/testing.md, "What the tests prove"): one line per test
 * file, with a fixed prefix so they can be found in the output.
 */
export function recordFigure(name: string, figures: Record<string, number>): void {
  const text = Object.entries(figures)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  // The second test tier (DynamoDB Local) prints the same figures again: its lines name the store.
  const store =
    process.env.ALLOT_STORE && process.env.ALLOT_STORE !== 'dynalite' ? ` (${process.env.ALLOT_STORE})` : '';
  console.log(`[issue-5 figures] ${name}${store}: ${text}`);
}
