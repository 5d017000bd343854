/**
 * What every assertion of the tier returns: data, never a throw, so a failing contract reads as
 * one precise sentence in the test output.
 * @see SPEC §10
 */
export type Verdict = { ok: true } | { ok: false; reason: string };

/** The passing verdict. */
export const pass: Verdict = { ok: true };

/** A failing verdict with its reason. */
export function fail(reason: string): Verdict {
  return { ok: false, reason };
}

/** The first failing verdict of several checks, or pass. */
export function firstFailure(verdicts: Iterable<Verdict>): Verdict {
  for (const v of verdicts) if (!v.ok) return v;
  return pass;
}

/** Shows a short excerpt of raw text around `at` (UTF-16 index), escaped for one log line. */
export function excerpt(text: string, at: number, radius = 40): string {
  const start = Math.max(0, at - radius);
  const end = Math.min(text.length, at + radius);
  const body = JSON.stringify(text.slice(start, end)).slice(1, -1);
  return `${start > 0 ? "…" : ""}${body}${end < text.length ? "…" : ""}`;
}
