/**
 * A test file's own time: `pass(seconds)` moves Date.now (the service's one clock, lib/service/context.ts)
 * forward, or back with a negative number; every test starts again at real time.
 */
import { afterEach, beforeEach, vi } from 'vitest';

export function useMovedClock(): { pass: (seconds: number) => void } {
  const realNow = Date.now.bind(Date);
  let offset = 0;
  beforeEach(() => {
    offset = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
  });
  afterEach(() => vi.restoreAllMocks());
  return { pass: (seconds) => void (offset += seconds * 1000) };
}
