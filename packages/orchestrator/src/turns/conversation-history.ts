import type { ConversationHistory, HistorySubmission } from "@jr2/wire";

/**
 * The byte-exact history of a run's continued conversations, as the Harness streamed it in
 * `history` events (issue 27, ADR-0175): per iid, each part with its running sha256, in stream
 * order. Kept with the live run (in memory; it leaves with the run when the run settles; the
 * host stores each new part beside the transcript and restore reloads them, ADR-0176) and
 * pushed back on a `kept` admission the Harness answered 404 for, so a Harness that lost its
 * data dir rebuilds the conversation instead of starting a new one. Separate from the
 * transcript, which caps long fields for display.
 */
export class ConversationHistories {
  readonly #parts = new Map<string, HistorySubmission[]>();

  /**
   * Records one `history` event of `iid` once: a part whose sha256 is held already (a stream
   * read again after a restore) adds nothing. Returns whether it was new.
   */
  record(iid: string, part: HistorySubmission): boolean {
    const parts = this.#parts.get(iid) ?? [];
    if (parts.some((p) => p.sha256 === part.sha256)) return false;
    parts.push({ submissionId: part.submissionId, messages: part.messages, sha256: part.sha256 });
    this.#parts.set(iid, parts);
    return true;
  }

  /** Forgets `iid`'s history (a fresh conversation whose Turn ended: never admitted again). */
  drop(iid: string): void {
    this.#parts.delete(iid);
  }

  /** The `history` field of a re-admission on `iid`, or `undefined` when nothing is held. */
  historyOf(iid: string): ConversationHistory | undefined {
    const parts = this.#parts.get(iid);
    return parts && parts.length > 0 ? { submissions: [...parts] } : undefined;
  }

  /** Bytes held (UTF-16 code units of the message texts): `bench:soak` reports it per run. */
  get size(): number {
    let n = 0;
    for (const parts of this.#parts.values()) for (const p of parts) n += p.messages.length;
    return n;
  }
}
