import { memberOf, readRequestBody } from "../request-body.js";
import { lastAllowedList, WORKING_TOOL_NAMES } from "../texts.js";
import { fail, pass, type Verdict } from "../verdict.js";
import { receiptsOf } from "./receipts.js";
import { allowedOfRequest } from "./tools-block.js";

/**
 * §10 item 8, the pre-Menu surface `{ tools }` (§7.6): a Harness reading it presents those
 * tools as the tools block (after the Working tools, in their order) and states them all as
 * the Allowed picks.
 * @param request raw first model request of the Turn; @param legacyTools the names the old surface served
 * @see SPEC §10.8, §7.6
 */
export function legacySurfacePresented(request: string, legacyTools: readonly string[]): Verdict {
  const read = readRequestBody(request);
  if (!read.ok) return fail(`the request cannot be read: ${read.reason}`);
  const tools = memberOf(read.body, "tools");
  if (!tools) return fail("the request carries no tools block");
  const names = (JSON.parse(request.slice(tools.valueSpan.start, tools.valueSpan.end)) as unknown[])
    .map((t) => {
      const x = t as { name?: unknown; function?: { name?: unknown } };
      return String(x.function?.name ?? x.name);
    })
    .filter((n) => !WORKING_TOOL_NAMES.has(n));
  if (names.join(",") !== legacyTools.join(",")) {
    return fail(
      `the tools block presents [${names.join(", ")}], the old surface served [${legacyTools.join(", ")}]`,
    );
  }
  const allowed = allowedOfRequest(request);
  if (!allowed || allowed.join(",") !== legacyTools.join(",")) {
    return fail(
      `the Turn part states Allowed now: ${allowed?.join(", ") || "nothing"}; an old surface's tools are all allowed (${legacyTools.join(", ")})`,
    );
  }
  return pass;
}

/**
 * §10 item 8, an older pick answer: without `moved` the receipt says the pick was delivered
 * without claiming the workflow moved (absent is not false); without `allowed` it states no
 * Allowed line at all (absent is not empty).
 * @param requests raw bodies after the pick; @param pick the tool called
 * @param answered which fields the old answer lacked
 * @see SPEC §10.8, §7.4 (answer without moved), §7.6
 */
export function oldAnswerRendered(
  requests: readonly string[],
  pick: string,
  answered: { withoutMoved: boolean; withoutAllowed: boolean },
): Verdict {
  const receipt = receiptsOf(requests).find((r) => r.pick === pick);
  if (!receipt) return fail(`no receipt of "${pick}" reached the model`);
  const text = receipt.text;
  if (answered.withoutMoved) {
    if (receipt.class !== "delivered-unknown-move") {
      return fail(`an answer without \`moved\` was rendered as ${receipt.class}: ${JSON.stringify(text)}`);
    }
    if (/moved on|still in the state|nothing moved|not allowed/i.test(text)) {
      return fail(
        `an answer without \`moved\` claims to know whether the workflow moved: ${JSON.stringify(text)}`,
      );
    }
  }
  const line = lastAllowedList(text);
  if (answered.withoutAllowed && line !== undefined) {
    return fail(
      `an answer without \`allowed\` was rendered with "Allowed now: ${line.join(", ") || "none"}": absent is not empty`,
    );
  }
  if (!answered.withoutAllowed && line === undefined) return fail("the receipt states no Allowed line");
  return pass;
}
