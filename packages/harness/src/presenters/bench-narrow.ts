import type { Tool } from "@jr2/wire";

/**
 * BENCHMARK-ONLY (bench/cache, SPEC §12): `JR2_BENCH_NARROW_TOOLS=1` makes each Submission present
 * only its Allowed picks as Menu tools — the per-Turn narrowed tools block jr2 exists to avoid
 * (§0.1). It changes the head of every rendered prompt and so breaks the prefix cache; it is here
 * only so the cache bench can measure that cost against the fixed Menu in one run. Off unless the
 * variable is exactly "1".
 * @see SPEC §0, §3.3, §12; docs/adr/0300-cache-bench-narrow-switch.md
 */

/** The env variable that turns the benchmark-only narrowed tools block on. */
export const BENCH_NARROW_TOOLS_ENV = "JR2_BENCH_NARROW_TOOLS";

/** The loud warning main.ts prints at start when the switch is on. */
export const BENCH_NARROW_TOOLS_WARNING =
  "jr2-harness: WARNING — JR2_BENCH_NARROW_TOOLS=1: BENCHMARK-ONLY mode. Each Submission presents " +
  "only its Allowed picks as Menu tools, which changes the tools block per Turn and BREAKS THE " +
  "PREFIX CACHE (SPEC §0). Never run a real workflow like this.";

/** True only when `env.JR2_BENCH_NARROW_TOOLS === "1"`. */
export function benchNarrowTools(env: Readonly<Record<string, string | undefined>>): boolean {
  return env[BENCH_NARROW_TOOLS_ENV] === "1";
}

/**
 * The Menu tools one Submission presents: the whole Menu (always, unless `narrow`), or — in the
 * benchmark-only mode — the Menu items in `allowed`, still in Menu order.
 */
export function menuForSubmission(
  menu: readonly Tool[],
  allowed: readonly string[],
  narrow: boolean,
): readonly Tool[] {
  if (!narrow) return menu;
  const keep = new Set(allowed);
  return menu.filter((item) => keep.has(item.name));
}
