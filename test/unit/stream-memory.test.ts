import { describe, expect, it } from 'vitest';
import { StreamMemory } from '../../lib/service/stream/memory.ts';

const claim = (name: string) => ({ pk: 'O#default#claims', sk: name });

describe("the stream function's memory of removed claims", () => {
  it('knows a claim gone by its key and uid, and nothing of another uid at that key', () => {
    const memory = new StreamMemory();
    memory.claimRemoved(claim('a'), 'uid-1');
    expect(memory.isClaimRemoved(claim('a'), 'uid-1')).toBe(true);
    // The claim made again under its name has another uid: not known gone, so it is read.
    expect(memory.isClaimRemoved(claim('a'), 'uid-2')).toBe(false);
    expect(memory.isClaimRemoved(claim('b'), 'uid-1')).toBe(false);
  });

  it('forgets the oldest beyond its bound (a forgotten claim is read, never assumed)', () => {
    const memory = new StreamMemory(2);
    memory.claimRemoved(claim('a'), 'uid-a');
    memory.claimRemoved(claim('b'), 'uid-b');
    memory.claimRemoved(claim('a'), 'uid-a'); // seen again: the newest now
    memory.claimRemoved(claim('c'), 'uid-c');
    expect(memory.isClaimRemoved(claim('b'), 'uid-b')).toBe(false);
    expect(memory.isClaimRemoved(claim('a'), 'uid-a')).toBe(true);
    expect(memory.isClaimRemoved(claim('c'), 'uid-c')).toBe(true);
  });
});
