import { createHash } from "node:crypto";
import type { ConversationHistory } from "@jr2/wire";

/**
 * The running sha256 of a conversation's byte-exact history (issue 27, ADR-0175): the store
 * chains it per message row, the wire's `history` per Submission — the same rule both times.
 * @see packages/wire/src/conversation-history.ts
 */

/** The running hash before anything: sha256 of the empty string. */
export const HISTORY_SHA256_START = createHash("sha256").update("").digest("hex");

/** sha256(previous hex ‖ "\n" ‖ text as UTF-8), as lowercase hex. */
export function chainHash(previous: string, text: string): string {
  return createHash("sha256").update(previous).update("\n").update(text, "utf8").digest("hex");
}

/**
 * Checks a pushed `history`: each Submission's `sha256` must chain from the one before, its
 * `messages` parse as a JSON array. Returns every message JSON text in order (re-serialized
 * from the parsed array, which is byte-identical for the JSON the Harness wrote), or why it
 * was refused, naming the Submission.
 */
export function verifyHistory(
  history: ConversationHistory,
):
  | { ok: true; submissions: Array<{ submissionId: string; messages: string[] }> }
  | { ok: false; why: string } {
  let hash = HISTORY_SHA256_START;
  const submissions: Array<{ submissionId: string; messages: string[] }> = [];
  for (const [i, s] of history.submissions.entries()) {
    hash = chainHash(hash, s.messages);
    const which = `Submission ${i} (\`${s.submissionId}\`)`;
    if (hash !== s.sha256) return { ok: false, why: `${which}: its sha256 does not match its messages` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(s.messages);
    } catch {
      return { ok: false, why: `${which}: its messages are not JSON` };
    }
    if (!Array.isArray(parsed)) return { ok: false, why: `${which}: its messages are not a JSON array` };
    submissions.push({ submissionId: s.submissionId, messages: parsed.map((m) => JSON.stringify(m)) });
  }
  return { ok: true, submissions };
}

/** The wire's `history` of stored message rows (in order), grouped by Submission. */
export function historyOfRows(
  rows: ReadonlyArray<{ submissionId: string; json: string }>,
): ConversationHistory {
  const groups: Array<{ submissionId: string; json: string[] }> = [];
  for (const r of rows) {
    const last = groups.at(-1);
    if (last?.submissionId === r.submissionId) last.json.push(r.json);
    else groups.push({ submissionId: r.submissionId, json: [r.json] });
  }
  let hash = HISTORY_SHA256_START;
  return {
    submissions: groups.map((g) => {
      const messages = `[${g.json.join(",")}]`;
      hash = chainHash(hash, messages);
      return { submissionId: g.submissionId, messages, sha256: hash };
    }),
  };
}
