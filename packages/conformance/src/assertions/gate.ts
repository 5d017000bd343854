import { sameSet } from "../texts.js";
import { fail, pass, type Verdict } from "../verdict.js";

/** One HTTP answer as recorded: status and the raw body text. */
export interface HttpAnswer {
  status: number;
  body: string;
}

function json(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/**
 * §10 item 7: a Gate send the run would not take now is answered 409 with an error body
 * `{ error, code: "JR2_ERR_…", acceptsNow: string[] }`; with `expected`, `acceptsNow` must hold
 * exactly those names (as a set).
 * @see SPEC §10.7, §6, §4 (error bodies)
 */
export function gateRefusedWithAcceptsNow(answer: HttpAnswer, expected?: readonly string[]): Verdict {
  if (answer.status !== 409)
    return fail(`the Gate send was answered ${answer.status}, not 409: ${answer.body}`);
  const body = json(answer.body) as { error?: unknown; code?: unknown; acceptsNow?: unknown } | undefined;
  if (!body || typeof body !== "object") return fail(`the 409 body is not JSON: ${answer.body}`);
  if (typeof body.error !== "string" || body.error.length === 0)
    return fail("the 409 body has no `error` text");
  if (typeof body.code !== "string" || !body.code.startsWith("JR2_ERR_")) {
    return fail(`the 409 body's code is ${JSON.stringify(body.code)}, not a JR2_ERR_ code`);
  }
  if (!isStringArray(body.acceptsNow)) return fail("the 409 body has no `acceptsNow` list of names");
  if (expected && !sameSet(body.acceptsNow, expected)) {
    return fail(`acceptsNow is [${body.acceptsNow.join(", ")}], expected [${expected.join(", ")}]`);
  }
  return pass;
}

/**
 * The refused send delivered nothing: the run's `value` and `context` (from `GET /runs/:id`)
 * are unchanged across it.
 * @see SPEC §6 ("nothing delivered")
 */
export function nothingDelivered(before: HttpAnswer, after: HttpAnswer): Verdict {
  const a = json(before.body) as { value?: unknown; context?: unknown } | undefined;
  const b = json(after.body) as { value?: unknown; context?: unknown } | undefined;
  if (!a || !b) return fail("a run reading is not JSON");
  if (JSON.stringify(a.value) !== JSON.stringify(b.value)) {
    return fail(`the run moved from ${JSON.stringify(a.value)} to ${JSON.stringify(b.value)}`);
  }
  if (JSON.stringify(a.context) !== JSON.stringify(b.context)) return fail("the run's context changed");
  return pass;
}

/**
 * The open Gate `gateId` is listed by `GET /runs/:id` with `accepts` (every name it may take)
 * and `acceptsNow` ⊆ accepts; with `expectedNow`, exactly those names.
 * @see SPEC §6
 */
export function gateListed(run: HttpAnswer, gateId: string, expectedNow?: readonly string[]): Verdict {
  const body = json(run.body) as { gates?: Array<{ id?: unknown; accepts?: unknown; acceptsNow?: unknown }> };
  const gate = body?.gates?.find((g) => g.id === gateId);
  if (!gate) return fail(`no open Gate "${gateId}" in ${run.body}`);
  const accepts = Array.isArray(gate.accepts)
    ? gate.accepts.map((t) => (t as { name?: unknown }).name)
    : undefined;
  if (!isStringArray(accepts)) return fail(`Gate "${gateId}" lists no accepts`);
  if (!isStringArray(gate.acceptsNow)) return fail(`Gate "${gateId}" lists no acceptsNow`);
  const outside = gate.acceptsNow.filter((n) => !accepts.includes(n));
  if (outside.length)
    return fail(`Gate "${gateId}": acceptsNow names ${outside.join(", ")} outside its accepts`);
  if (expectedNow && !sameSet(gate.acceptsNow, expectedNow)) {
    return fail(
      `Gate "${gateId}": acceptsNow is [${gate.acceptsNow.join(", ")}], expected [${expectedNow.join(", ")}]`,
    );
  }
  return pass;
}
