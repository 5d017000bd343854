/**
 * The state column of `jr2 history`: the run root's state value, then the state of each nested
 * Machine the version's persisted snapshot holds (depth first, ` › ` between them) — so a
 * `workspace()` workflow's history says where its body was (`working › implement`), not only the
 * root's `working`. A workspace wrapper's own `running` is left out (it says nothing a user
 * wrote); its `attaching`/`finishing` are kept.
 * @see SPEC §5.2, §8 (ADR-0270)
 */
import { formatValue } from "./feed-printer.js";

interface PersistedChild {
  src?: unknown;
  snapshot?: { value?: unknown; children?: Record<string, PersistedChild> };
}

/** A child invoked by a `workspace()` wrapper (its Machine id is `workspace`): xstate names its src so. */
const invokedByWrapper = (child: PersistedChild) =>
  typeof child.src === "string" && /^xstate\.invoke\.\d+\.workspace\./.test(child.src);

/** The nested Machines' state values below `snapshot`, depth first (a wrapper's `running` left out). */
export function nestedStates(snapshot: unknown): string[] {
  const children = (snapshot as PersistedChild["snapshot"] | null)?.children ?? {};
  return Object.values(children).flatMap((child) => {
    const s = child.snapshot;
    if (s?.value === undefined) return [];
    const isWrapper = Object.values(s.children ?? {}).some(invokedByWrapper);
    const own = isWrapper && s.value === "running" ? [] : [formatValue(s.value)];
    return [...own, ...nestedStates(s)];
  });
}

/** One version's state as `jr2 history` prints it: `working › implement`. */
export function stateLine(value: unknown, snapshot: unknown): string {
  return [formatValue(value), ...nestedStates(snapshot)].join(" › ");
}
