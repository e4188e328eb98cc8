/** How work is spread over concurrent requests, shared by the stream and history functions. */

/** Runs `work` on every item, at most `limit` at once (a new one starts as soon as one ends). */
export async function eachAtMost<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
