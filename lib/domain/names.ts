/** Object names (api.md, "Objects"): DNS labels for what users name, DNS subdomains for allocation objects. */

const LABEL = /^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

/** Why `name` is not a valid object or namespace name, or undefined when it is. */
export function nameProblem(name: unknown, maxLength: 63 | 253 = 63): string | undefined {
  if (typeof name !== 'string') return 'must be a string';
  if (name.length === 0) return 'must not be empty';
  if (name.length > maxLength) return `must be at most ${maxLength} characters`;
  if (!(maxLength === 63 ? LABEL : SUBDOMAIN).test(name)) {
    return 'must consist of lowercase letters, digits, "-" and ".", and start and end with a letter or digit';
  }
  return undefined;
}

export const ALLOCATION_NAME_MAX = 253;
