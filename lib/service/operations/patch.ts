/**
 * PATCH with a JSON merge patch (RFC 7386), what `kubectl apply`, `annotate`, `label` and `edit` send for
 * a custom resource: the object as a GET shows it, patched, then replaced exactly as a PUT would replace
 * it, so every rule of a PUT holds (immutable fields, validation, a claim allocates before it answers).
 * The replace goes ahead only while the object is still the one read; otherwise the patch is applied
 * again to what is there now.
 */
import { AlreadyExistsError, BadRequestError } from '../../domain/errors.ts';
import { kindOfResource, type Resource } from '../../domain/kinds.ts';
import { applyMergePatch } from '../../domain/objects/merge-patch.ts';
import type { ApiObject } from '../../domain/objects/objects.ts';
import { isObject } from '../../domain/objects/validation.ts';
import { ChangedSinceRead, type Operation } from './common.ts';

/**
 * Each lost race means another write landed, so n concurrent patches of one object all land within n
 * attempts; beyond this many the caller is told to retry (409).
 */
const MAX_PATCH_ATTEMPTS = 16;

/** A short jittered pause after a lost race, so the losers do not read again in lockstep. */
const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * Math.min(attempt, 5)));

export function patchOperation(resource: Resource, read: Operation, replace: Operation): Operation {
  return async (request, ctx) => {
    const patch = request.body;
    if (!isObject(patch)) throw new BadRequestError('a merge patch must be a JSON object');
    for (let attempt = 1; attempt <= MAX_PATCH_ATTEMPTS; attempt++) {
      // A missing object answers 404 here: a PATCH never creates.
      const current = (await read(request, ctx)).body as ApiObject;
      const patched = applyMergePatch(current, patch);
      try {
        return await replace({ ...request, body: patched, unchangedSince: current }, ctx);
      } catch (error) {
        if (!(error instanceof ChangedSinceRead)) throw error;
      }
      await backoff(attempt);
    }
    const kind = kindOfResource(resource);
    const name = request.params.name ?? '';
    throw new AlreadyExistsError(`${kind} "${name}" changed while it was being patched; retry`).about(
      kind,
      name,
    );
  };
}
