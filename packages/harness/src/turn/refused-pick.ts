import type { PickIssue, TolerantPickAnswer } from "@jr2/wire";

/**
 * A pick the Orchestrator refused with a coded 400 (§4.3): it read the pick and said no, so the
 * pick did not reach the Machine and nothing moved — an answer, not a transport failure. The
 * model gets an invalid-arguments receipt naming the problem.
 * @see SPEC §4.3, §7.4
 */

/** Keys a JSON parser refuses (prototype pollution): `__proto__`, and `prototype` under `constructor`. */
export function refusedKeys(args: unknown, path: Array<string | number> = []): PickIssue[] {
  if (typeof args !== "object" || args === null) return [];
  const out: PickIssue[] = [];
  const entries: Array<[string | number, unknown]> = Array.isArray(args)
    ? args.map((v, i) => [i, v])
    : Object.entries(args);
  for (const [key, value] of entries) {
    const at = [...path, key];
    if (key === "__proto__") out.push({ path: at, message: "a key named `__proto__` is refused; rename it" });
    else if (key === "prototype" && path.at(-1) === "constructor")
      out.push({ path: at, message: "a `constructor.prototype` key is refused; rename it" });
    else out.push(...refusedKeys(value, at));
  }
  return out;
}

/**
 * The answer a refused pick stands for: not delivered, the Turn open, `allowed` as the model
 * last read it (the refusal changed nothing). The issues name refused keys when the arguments
 * hold any (the Orchestrator's own text may only say "not valid JSON"), else the Orchestrator's
 * issues, else its message.
 */
export function refusedPickAnswer(
  args: unknown,
  refused: { message: string; issues: PickIssue[] | undefined },
  allowed: readonly string[] | undefined,
): TolerantPickAnswer {
  const keys = refusedKeys(args);
  const issues =
    keys.length > 0
      ? keys
      : refused.issues && refused.issues.length > 0
        ? refused.issues
        : [{ path: [], message: refused.message }];
  return {
    delivered: false,
    moved: undefined,
    turnComplete: false,
    allowed: allowed === undefined ? undefined : [...allowed],
    refusal: "invalid-arguments",
    issues,
  };
}
