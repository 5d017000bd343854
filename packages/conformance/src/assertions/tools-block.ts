import { textOf } from "../json-scan.js";
import { contentText, memberOf, readRequestBody } from "../request-body.js";
import { lastAllowedList, sameSet } from "../texts.js";
import { excerpt, fail, pass, type Verdict } from "../verdict.js";

interface ToolView {
  name: string;
  description: unknown;
  parameters: unknown;
}

function toolView(tool: unknown): ToolView {
  const t = (tool ?? {}) as {
    name?: unknown;
    function?: ToolView;
    description?: unknown;
    parameters?: unknown;
  };
  const f = t.function && typeof t.function === "object" ? t.function : t;
  return { name: String(f.name ?? "?"), description: f.description, parameters: f.parameters };
}

/**
 * Says how two raw tools arrays differ, for a reason: reordered, added/removed tools, a
 * changed description or parameters, or (same by value) the bytes alone.
 */
export function describeToolsDifference(a: string, b: string): string {
  let ta: ToolView[];
  let tb: ToolView[];
  try {
    ta = (JSON.parse(a) as unknown[]).map(toolView);
    tb = (JSON.parse(b) as unknown[]).map(toolView);
  } catch {
    return "one of the tools blocks is not a JSON array";
  }
  const na = ta.map((t) => t.name);
  const nb = tb.map((t) => t.name);
  const added = nb.filter((n) => !na.includes(n));
  const removed = na.filter((n) => !nb.includes(n));
  if (added.length || removed.length) {
    return `tools ${removed.length ? `removed: ${removed.join(", ")}` : ""}${removed.length && added.length ? "; " : ""}${added.length ? `added: ${added.join(", ")}` : ""}`;
  }
  if (na.join("\u0000") !== nb.join("\u0000")) {
    return `tools reordered: [${na.join(", ")}] then [${nb.join(", ")}]`;
  }
  for (let i = 0; i < ta.length; i++) {
    const x = ta[i] as ToolView;
    const y = tb[i] as ToolView;
    if (JSON.stringify(x.description) !== JSON.stringify(y.description)) {
      return `tool "${x.name}": description changed from ${JSON.stringify(x.description)} to ${JSON.stringify(y.description)}`;
    }
    if (JSON.stringify(x.parameters) !== JSON.stringify(y.parameters)) {
      return `tool "${x.name}": parameters changed`;
    }
  }
  let at = 0;
  while (at < a.length && a[at] === b[at]) at++;
  return `same tools by value, different bytes (key order, escapes or whitespace) at byte ${at}: «${excerpt(a, at, 20)}» vs «${excerpt(b, at, 20)}»`;
}

/**
 * §10 item 1 (and the "tools unchanged" half of item 2): the raw `tools` field of two request
 * bodies is byte-identical. Both must carry one. For an Agent with MCP servers (issue 29,
 * ADR-0230) pass two requests of ONE conversation: a new conversation lists its servers again.
 * @param a, b raw request bodies (model-sim's `raw`)
 * @see SPEC §10.1, §3.3
 */
export function sameToolsBlock(a: string, b: string): Verdict {
  const ra = readRequestBody(a);
  const rb = readRequestBody(b);
  if (!ra.ok) return fail(`the first request cannot be read: ${ra.reason}`);
  if (!rb.ok) return fail(`the second request cannot be read: ${rb.reason}`);
  const ma = memberOf(ra.body, "tools");
  const mb = memberOf(rb.body, "tools");
  if (!ma || !mb) return fail(`${!ma ? "the first" : "the second"} request carries no tools block`);
  const sa = textOf(a, ma.valueSpan);
  const sb = textOf(b, mb.valueSpan);
  if (sa === sb) return pass;
  return fail(`the tools blocks differ: ${describeToolsDifference(sa, sb)}`);
}

/**
 * §10 item 1 as the SPEC states it: two Submissions **whose Allowed picks differ** send a
 * byte-identical tools block. The Allowed picks are read from each request's newest
 * "Allowed now:" line; equal lists make the pair unfit to prove anything, and fail.
 * @param a, b raw request bodies, one from each Submission
 * @see SPEC §10.1
 */
export function sameToolsAcrossAllowedPicks(a: string, b: string): Verdict {
  const la = allowedOfRequest(a);
  const lb = allowedOfRequest(b);
  if (la === undefined || lb === undefined) {
    return fail(`${la === undefined ? "the first" : "the second"} request states no "Allowed now:" line`);
  }
  if (sameSet(la, lb)) {
    return fail(
      `both requests state the same Allowed picks (${la.join(", ") || "none"}); the assertion needs two Submissions whose Allowed picks differ`,
    );
  }
  return sameToolsBlock(a, b);
}

/** The newest Allowed-picks list in a raw request's messages, if any. */
export function allowedOfRequest(raw: string): string[] | undefined {
  const read = readRequestBody(raw);
  if (!read.ok) return undefined;
  let last: string[] | undefined;
  for (const m of read.body.parsed) {
    if (m.role !== "user" && m.role !== "tool") continue;
    const list = lastAllowedList(contentText(m));
    if (list !== undefined) last = list;
  }
  return last;
}
