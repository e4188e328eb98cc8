/**
 * What one stream function instance remembers from batch to batch: the claims it has seen removed, and
 * the key each held then.
 *
 * A claim's uid never comes back (a claim made again under its name gets a new one, and a claim's put is
 * never sent twice: sent again after a lost answer it could land after a release and bring the claim
 * back, lib/store/table.ts createObject), so a REMOVE record of a claim is a fact for good: no claim with that uid exists now, whenever the record was seen, in
 * whatever order it came. It spares two reads of a claim (allocations.ts):
 * - an object's REMOVE (does a claim still hold it?) when the claim's REMOVE came first, as it always
 *   does when the object went by the claim's reclaim policy (Recycle deletes it in the work on the
 *   claim's REMOVE, and the object's REMOVE is a record of that write, in a later batch);
 * - an object's INSERT made by a claim's handler (does its claim hold it?) when the claim was released
 *   before the object's record was worked on (a claim released at once, as under load): the claim's
 *   REMOVE names the key it held, and the work on that REMOVE reclaims the object there.
 *
 * Nothing is decided on what is not remembered: a uid forgotten (the memory is bounded, and a new
 * instance starts with none) is read, as before. Records only ever add to it, so a duplicate, a replay or
 * a record out of order cannot make it say anything untrue.
 */
import type { ItemKey } from '../../domain/objects/records.ts';
import { itemKeyText } from '../../store/table.ts';

/** Claims remembered removed, newest kept: about 100 bytes each, so a few MB at most. */
export const REMEMBERED_CLAIMS = 20_000;

export class StreamMemory {
  /** By claim key and uid: the key of the object the claim held when it was removed ('' for none). */
  private readonly removed = new Map<string, string>();

  constructor(private readonly limit = REMEMBERED_CLAIMS) {}

  /** A REMOVE record of the claim at `key` with this uid was seen; `bound`, what its old image held. */
  claimRemoved(key: ItemKey, uid: string, bound?: ItemKey): void {
    const text = `${itemKeyText(key)}\u0000${uid}`;
    this.removed.delete(text);
    this.removed.set(text, bound ? itemKeyText(bound) : '');
    if (this.removed.size > this.limit) this.removed.delete(this.removed.keys().next().value!);
  }

  /** Whether the claim at `key` with this uid is known to be gone (false: not known, read it). */
  isClaimRemoved(key: ItemKey, uid: string): boolean {
    return this.removed.has(`${itemKeyText(key)}\u0000${uid}`);
  }

  /** Whether the claim at `key` with this uid is known to have been removed holding the object at `object`. */
  removedHolding(key: ItemKey, uid: string, object: ItemKey): boolean {
    return this.removed.get(`${itemKeyText(key)}\u0000${uid}`) === itemKeyText(object);
  }
}
