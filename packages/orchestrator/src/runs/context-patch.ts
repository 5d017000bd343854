/**
 * A fork's context patch (ADR-0270): a JSON merge patch (RFC 7396) applied to the version's
 * root context before the fork starts. jr2 Machines declare their context by TypeScript types
 * only (no runtime schema), so the patch is checked against the context it patches: it may
 * set only keys that context has, each to a value of the same JSON kind (an object is patched
 * key by key the same way); removing a key (`null`) is refused. Pure.
 * @see SPEC §8
 */

/** The JSON kind of a value, as the refusals name it. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * `context` patched by `patch`.
 * @throws Error whose message names the path and what is wrong (the caller answers 400)
 */
export function applyContextPatch(
  context: unknown,
  patch: Record<string, unknown>,
  path = "context",
): unknown {
  if (kindOf(context) !== "object")
    throw new Error(`\`${path}\` is ${kindOf(context)}, not an object: a merge patch cannot apply to it`);
  const target = { ...(context as Record<string, unknown>) };
  for (const [key, value] of Object.entries(patch)) {
    const at = `${path}.${key}`;
    if (!(key in target))
      throw new Error(
        `\`${at}\` is not in the context (its keys: ${Object.keys(target).join(", ") || "none"})`,
      );
    if (value === null)
      throw new Error(
        `\`${at}\`: null would remove the key; a fork's context keeps every key the Machine reads`,
      );
    const was = target[key];
    if (kindOf(value) !== kindOf(was))
      throw new Error(`\`${at}\` is ${kindOf(was)} in the context; the patch gives ${kindOf(value)}`);
    target[key] =
      kindOf(value) === "object" ? applyContextPatch(was, value as Record<string, unknown>, at) : value;
  }
  return target;
}
