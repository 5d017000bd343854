/**
 * Errors in a saved snapshot, as text (issue 22 §2): xstate keeps a Machine's error object in
 * its persisted snapshot (`error` of an errored actor, the root's or a child's), and JSON keeps
 * none of an Error's own fields — read back, it was `{}`, and its fault reason `[object
 * Object]`. A save writes each one as {@link ErrorRecord}: `name`, `message`, `code` as text.
 */

/** What a stored error keeps, as text: `name`, `message` and `code` (when it has one). */
export interface ErrorRecord {
  name: string;
  message: string;
  code?: string;
}

/**
 * `error` as {@link ErrorRecord}: an Error (or a plain object read back from JSON) by its
 * fields; any other value by its JSON (a string as it is).
 */
export function errorRecord(error: unknown): ErrorRecord {
  if (typeof error === "object" && error !== null) {
    const e = error as { name?: unknown; message?: unknown; code?: unknown };
    const message = typeof e.message === "string" ? e.message : jsonText(error);
    const name = typeof e.name === "string" ? e.name : error instanceof Error ? "Error" : "Object";
    return { name, message, ...(typeof e.code === "string" ? { code: e.code } : {}) };
  }
  return { name: typeof error, message: typeof error === "string" ? error : String(error) };
}

/**
 * `snapshot` with every actor's `error` (the root's and each child's, at any depth) replaced by
 * its {@link ErrorRecord}; the same object when none has one (the common case: no copy).
 */
export function snapshotWithTextErrors(snapshot: unknown): unknown {
  if (!hasError(snapshot)) return snapshot;
  const copy = { ...(snapshot as Record<string, unknown>) };
  if (copy.error !== undefined) copy.error = errorRecord(copy.error);
  const children = copy.children as Record<string, { snapshot?: unknown } | undefined> | undefined;
  if (children && typeof children === "object")
    copy.children = Object.fromEntries(
      Object.entries(children).map(([id, child]) => [
        id,
        child && typeof child === "object"
          ? { ...child, snapshot: snapshotWithTextErrors(child.snapshot) }
          : child,
      ]),
    );
  return copy;
}

/** Whether an actor of the snapshot has an `error`. */
function hasError(snapshot: unknown): boolean {
  if (typeof snapshot !== "object" || snapshot === null) return false;
  const s = snapshot as { error?: unknown; children?: Record<string, { snapshot?: unknown } | undefined> };
  if (s.error !== undefined) return true;
  return Object.values(s.children ?? {}).some((c) => hasError(c?.snapshot));
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
