/**
 * The state chart's pure readings: which states a run's value makes active, and how an xstate
 * event type reads on an edge. Kept apart from the drawing so they are tested without a DOM.
 */

/** `xstate.done.actor.x` → `done: x`; `xstate.after.1h.a.b` → `after 1h`. */
export function shortEvent(event: string): string {
  if (event === "") return "always";
  const done = /^xstate\.done\.actor\.(.+)$/.exec(event);
  if (done) return `done: ${done[1]}`;
  const error = /^xstate\.error\.actor\.(.+)$/.exec(event);
  if (error) return `error: ${error[1]}`;
  const after = /^xstate\.after\.([^.]+)/.exec(event);
  if (after) return `after ${after[1]}`;
  return event;
}

/** The dot paths a state value names: `{ a: { b: "c" } }` → `a`, `a.b`, `a.b.c`. */
export function activePaths(value: unknown, prefix = ""): string[] {
  if (typeof value === "string") return [prefix ? `${prefix}.${value}` : value];
  if (value && typeof value === "object") {
    const out: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      const here = prefix ? `${prefix}.${k}` : k;
      out.push(here, ...activePaths(v, here));
    }
    return out;
  }
  return [];
}
