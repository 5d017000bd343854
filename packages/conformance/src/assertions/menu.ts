import { objectMembers, textOf } from "../json-scan.js";
import { memberOf, readRequestBody } from "../request-body.js";
import { WORKING_TOOL_NAMES } from "../texts.js";
import { fail, pass, type Verdict } from "../verdict.js";
import { describeToolsDifference } from "./tools-block.js";

/** One reading of a Menu: the state (or mode) it was read in, and the raw HTTP body it came in. */
export interface MenuObservation {
  /** The invoking state or mode, e.g. `implement` or `fix.arguing`. */
  state: string;
  /** Raw body of `GET /agents/:iid/surface` (its `menu` field is compared) or of a model request (its `tools`). */
  body: string;
}

function menuSpanOf(body: string): { field: string; bytes: string } | { reason: string } {
  try {
    const members = objectMembers(body);
    const member = members.find((m) => m.key === "menu") ?? members.find((m) => m.key === "tools");
    if (!member) return { reason: "it carries neither `menu` nor `tools`" };
    return { field: member.key, bytes: textOf(body, member.valueSpan) };
  } catch (error) {
    return { reason: `it is not a JSON object (${error instanceof Error ? error.message : String(error)})` };
  }
}

/**
 * §10 item 4: the Menu is byte-identical across the states of a continued conversation and
 * across modes. Each observation's raw `menu` (a surface) or `tools` (a model request) span is
 * compared with the first's; observations must come from at least two distinct states and be
 * of one kind (a surface's Menu and a request's tools block are different renderings).
 * @see SPEC §10.4, §3.3
 */
export function menuIdenticalAcrossStates(observations: readonly MenuObservation[]): Verdict {
  const states = new Set(observations.map((o) => o.state));
  if (states.size < 2) {
    return fail(
      `the Menu was read in ${states.size} state(s); the assertion needs at least two distinct states`,
    );
  }
  let first: { state: string; field: string; bytes: string } | undefined;
  for (const o of observations) {
    const span = menuSpanOf(o.body);
    if ("reason" in span) return fail(`the reading in state "${o.state}" cannot be used: ${span.reason}`);
    if (!first) {
      first = { state: o.state, ...span };
      continue;
    }
    if (span.field !== first.field) {
      return fail(`the readings mix a surface's \`menu\` and a request's \`tools\`; compare like with like`);
    }
    if (span.bytes !== first.bytes) {
      return fail(
        `the Menu read in state "${o.state}" differs from the one read in "${first.state}": ${describeToolsDifference(first.bytes, span.bytes)}`,
      );
    }
  }
  return pass;
}

/**
 * The tools block of a model request presents the surface's Menu: its non-Working tools are the
 * Menu's names in Menu order, each with the Menu's description and parameters (compared by
 * value: the Harness renders them in its engine's shape).
 * @param request raw model request body; @param surface raw `GET /agents/:iid/surface` body
 * @see SPEC §7.2 step 2, §3.3
 */
export function toolsBlockPresentsMenu(request: string, surface: string): Verdict {
  const read = readRequestBody(request);
  if (!read.ok) return fail(`the request cannot be read: ${read.reason}`);
  const tools = memberOf(read.body, "tools");
  if (!tools) return fail("the request carries no tools block");
  let menu: Array<{ name: string; description?: unknown; parameters?: unknown }>;
  try {
    menu = (JSON.parse(surface) as { menu: typeof menu }).menu;
  } catch {
    return fail("the surface body is not JSON");
  }
  if (!Array.isArray(menu)) return fail("the surface carries no `menu`");
  const presented = (JSON.parse(textOf(request, tools.valueSpan)) as unknown[])
    .map((t) => {
      const x = t as { function?: { name?: string; description?: unknown; parameters?: unknown } };
      return x.function ?? (t as { name?: string; description?: unknown; parameters?: unknown });
    })
    .filter((t) => !WORKING_TOOL_NAMES.has(String(t.name)));
  const names = presented.map((t) => String(t.name));
  const menuNames = menu.map((t) => t.name);
  if (names.join(",") !== menuNames.join(",")) {
    return fail(`the tools block presents [${names.join(", ")}], the Menu is [${menuNames.join(", ")}]`);
  }
  for (const [i, item] of menu.entries()) {
    const shown = presented[i];
    if (JSON.stringify(shown?.description) !== JSON.stringify(item.description)) {
      return fail(`tool "${item.name}": the tools block's description differs from the Menu's`);
    }
    if (JSON.stringify(shown?.parameters) !== JSON.stringify(item.parameters)) {
      return fail(`tool "${item.name}": the tools block's parameters differ from the Menu's`);
    }
  }
  return pass;
}
