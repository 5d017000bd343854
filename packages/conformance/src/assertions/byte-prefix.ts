import { textOf } from "../json-scan.js";
import { endOfLastMessage, type RequestBody, readRequestBody } from "../request-body.js";
import { excerpt, fail, pass, type Verdict } from "../verdict.js";
import { describeToolsDifference } from "./tools-block.js";

/** Where in request n a byte offset falls, for a reason. */
function locate(body: RequestBody, at: number): string {
  const k = body.messageSpans.findIndex((s) => at >= s.start && at < s.end);
  if (k !== -1) {
    const role = body.parsed[k]?.role ?? "?";
    return `message ${k} (role ${role}) was rewritten`;
  }
  const member = body.members.find((m) => at >= m.keySpan.start && at < m.valueSpan.end);
  if (member && member.key !== "messages") return `top-level field \`${member.key}\` differs`;
  if (member) return "the messages array was changed around its messages";
  return "the body's framing differs";
}

/**
 * §10's "request n is a byte prefix of request n+1", exactly: body n+1's raw text begins with
 * body n's raw text up to the end of its last message, and every other top-level field (all
 * but `messages`) is byte-identical — same keys, same raw value bytes. Works on raw text
 * spans found by a JSON scanner; nothing is re-serialized.
 * @param previous raw body of request n; @param next raw body of request n+1
 * @returns pass, or a reason naming the rewritten message or the changed field and the first
 *   differing bytes
 * @see SPEC §10 (definition), §10.2
 */
export function extendsPrevious(previous: string, next: string): Verdict {
  const rp = readRequestBody(previous);
  const rn = readRequestBody(next);
  if (!rp.ok) return fail(`request n cannot be read: ${rp.reason}`);
  if (!rn.ok) return fail(`request n+1 cannot be read: ${rn.reason}`);
  const p = rp.body;
  const n = rn.body;
  const head = previous.slice(0, endOfLastMessage(p));
  if (!next.startsWith(head)) {
    let at = 0;
    while (at < head.length && head[at] === next[at]) at++;
    return fail(
      `request n+1 does not begin with request n up to the end of its last message: ${locate(p, at)} (first difference at byte ${at}: «${excerpt(previous, at)}» became «${excerpt(next, at)}»)`,
    );
  }
  const others = (b: RequestBody) => b.members.filter((m) => m.key !== "messages");
  const keysP = others(p).map((m) => m.key);
  const keysN = others(n).map((m) => m.key);
  const missing = keysP.filter((k) => !keysN.includes(k));
  const added = keysN.filter((k) => !keysP.includes(k));
  if (missing.length || added.length) {
    return fail(
      `the top-level fields changed:${missing.length ? ` dropped ${missing.join(", ")}` : ""}${added.length ? ` added ${added.join(", ")}` : ""}`,
    );
  }
  for (const mp of others(p)) {
    const mn = others(n).find((m) => m.key === mp.key);
    if (!mn) continue;
    const vp = textOf(previous, mp.valueSpan);
    const vn = textOf(next, mn.valueSpan);
    if (vp === vn) continue;
    if (mp.key === "tools")
      return fail(`top-level field \`tools\` differs: ${describeToolsDifference(vp, vn)}`);
    let at = 0;
    while (at < vp.length && vp[at] === vn[at]) at++;
    return fail(
      `top-level field \`${mp.key}\` differs: «${excerpt(vp, at, 30)}» became «${excerpt(vn, at, 30)}»`,
    );
  }
  return pass;
}

/**
 * §10 item 2 over a sequence: each request extends the one before it (see
 * {@link extendsPrevious}); the reason names the pair.
 * @param requests raw bodies of one conversation, oldest first
 * @see SPEC §10.2
 */
export function eachRequestExtendsThePrevious(requests: readonly string[]): Verdict {
  for (let i = 1; i < requests.length; i++) {
    const v = extendsPrevious(requests[i - 1] as string, requests[i] as string);
    if (!v.ok) return fail(`request ${i} does not extend request ${i - 1}: ${v.reason}`);
  }
  return pass;
}
