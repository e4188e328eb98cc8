/**
 * JSON merge patch (RFC 7386), what `kubectl apply` sends for a custom resource: an object merges key by
 * key, `null` removes a key, and anything else (arrays included) replaces the target whole. Pure.
 */

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The target with the patch applied; neither argument is changed. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    // Defined, not assigned: a "__proto__" key in the patch stays a plain key.
    else
      Object.defineProperty(result, key, {
        value: applyMergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return result;
}
