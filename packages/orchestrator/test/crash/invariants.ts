/**
 * The crash harness's checks on the model's side, from the endpoint's byte-exact request log
 * (see crash-trials.ts's header for which phase holds to which).
 */
import { extendsPrevious, type RecordedRequest } from "../../../conformance/src/index.js";
import { noticeLine } from "../../../harness/src/presenters/menu.js";

/** The line the Harness renders for a `conversation-new` notice (§5.3). */
export const CONVERSATION_NEW_LINE = noticeLine({ type: "conversation-new" });

interface Parsed {
  seq: number;
  raw: string;
  model: string;
  messages: Array<{ role: string; text: string; full: string }>;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  return "";
}

function parse(request: RecordedRequest): Parsed | undefined {
  try {
    const body = JSON.parse(request.raw) as { model?: string; messages?: Array<Record<string, unknown>> };
    if (!Array.isArray(body.messages)) return undefined;
    return {
      seq: request.seq,
      raw: request.raw,
      model: String(body.model ?? request.model ?? ""),
      messages: body.messages.map((m) => ({
        role: String(m.role),
        text: textOf(m.content),
        full: JSON.stringify(m),
      })),
    };
  } catch {
    return undefined;
  }
}

/**
 * The conversations the requests open, per model: a conversation is told by its first user
 * message (the first Turn part). Returns model → openings without the `conversation-new` line
 * and openings with it.
 */
export function conversationOpenings(
  requests: readonly RecordedRequest[],
): Map<string, { plain: number; renewed: number }> {
  const seen = new Set<string>();
  const counts = new Map<string, { plain: number; renewed: number }>();
  for (const request of requests) {
    const parsed = parse(request);
    const first = parsed?.messages.find((m) => m.role === "user");
    if (!parsed || !first) continue;
    const key = `${parsed.model}\u0000${first.text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const count = counts.get(parsed.model) ?? { plain: 0, renewed: 0 };
    if (first.text.includes(CONVERSATION_NEW_LINE)) count.renewed++;
    else count.plain++;
    counts.set(parsed.model, count);
  }
  return counts;
}

/**
 * After an endpoint kill a model request may repeat only byte-identical. Violations: two
 * requests with the same messages but different bytes; a request that repeats an earlier one's
 * whole history and goes on with anything but the model's answer (the earlier request sent
 * again with changed content instead of as it was).
 */
export function repeatsWithChangedBytes(requests: readonly RecordedRequest[]): string[] {
  const parsed = requests.map(parse).filter((p): p is Parsed => p !== undefined);
  const violations: string[] = [];
  const byMessages = new Map<string, Parsed>();
  for (const p of parsed) {
    const key = `${p.model}\u0000${p.messages.map((m) => m.full).join("\u0001")}`;
    const earlier = byMessages.get(key);
    if (earlier && earlier.raw !== p.raw)
      violations.push(`request ${p.seq} repeats request ${earlier.seq}'s messages with other bytes`);
    if (!earlier) byMessages.set(key, p);
  }
  for (const [i, a] of parsed.entries())
    for (const b of parsed.slice(i + 1)) {
      if (b.model !== a.model || b.messages.length <= a.messages.length) continue;
      if (!a.messages.every((m, k) => b.messages[k]!.full === m.full)) continue;
      const next = b.messages[a.messages.length]!;
      if (next.role !== "assistant")
        violations.push(
          `request ${b.seq} sends request ${a.seq}'s history again with a ${next.role} message where the model's answer belongs`,
        );
    }
  return violations;
}

/**
 * After a Harness kill (issue 27, ADR-0175): a conversation's every request extends its
 * previous one byte for byte — in particular its first request after the restart extends the
 * last one before it (the Harness rebuilt it from its store; nothing of it was sent anew or
 * rewritten). A conversation is told by its model and first user message; a request repeated
 * with the same bytes (an endpoint retry) extends its previous too. Returns the violations.
 */
export function requestsExtendAcrossRestart(requests: readonly RecordedRequest[]): string[] {
  const conversations = new Map<string, RecordedRequest[]>();
  for (const r of [...requests].filter((q) => q.status === 200).sort((a, b) => a.seq - b.seq)) {
    const first = parse(r)?.messages.find((m) => m.role === "user");
    if (!first) continue;
    const key = `${r.model}\u0000${first.full}`;
    conversations.set(key, [...(conversations.get(key) ?? []), r]);
  }
  const violations: string[] = [];
  for (const list of conversations.values())
    for (const [i, next] of list.entries()) {
      const previous = list[i - 1];
      if (!previous) continue;
      const verdict = extendsPrevious(previous.raw, next.raw);
      if (!verdict.ok)
        violations.push(
          `request ${next.seq} (${next.model}) does not extend request ${previous.seq}: ${verdict.reason}`,
        );
    }
  return violations;
}
