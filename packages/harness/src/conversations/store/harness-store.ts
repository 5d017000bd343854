import type { ConversationHistory, StreamEvent } from "@jr2/wire";
import type { StoreFailure } from "./write-queue.js";

/**
 * The Harness's durable state (issue 27, ADR-0175): per conversation its stream log (offsets
 * are positions in it), its Submissions (which settled), the seat's definition, and the
 * byte-exact message JSON the engine replays, tagged with the Submission that added it and
 * chained by sha256; plus generic records for the lower folders' own ports (Repo Slots, MCP
 * snapshots, the KV working set): `harness_records(kind, key, json)`.
 *
 * Writes are queued and committed together (one transaction per flush): at the latest on the
 * next turn of the event loop, and before anything is answered that names them — `flush()` is
 * called before an admission or a stream page goes out, so the Orchestrator never reads an
 * offset a SIGKILL could take back. WAL with `synchronous=NORMAL`: a killed process loses
 * nothing committed (only a power loss may lose the last commits).
 * @see SPEC §7.1; docs/adr/0175-harness-durable-state.md
 */

/** One stored conversation as a restarted Harness rebuilds it. */
export interface StoredConversation {
  iid: string;
  /** The seat's definition as `putSeat` stored it; undefined before the first seat. */
  seat: unknown;
  /** The stream log, offset order. */
  events: StreamEvent[];
  /** Every message JSON text in replay order, with the Submission that added it. */
  messages: Array<{ submissionId: string; json: string }>;
}

/** A record of a lower folder's port (its `kind` names the port, e.g. `repo-slot`). */
export interface HarnessRecord {
  key: string;
  value: unknown;
}

/** The store's port; the SQLite store implements it (file-backed or `:memory:`). */
export interface HarnessStore {
  /** Where it keeps its file, or `:memory:`. */
  readonly path: string;
  /** The conversation, or `undefined` when the store has none of that iid. */
  load(iid: string): StoredConversation | undefined;
  /** Records a new conversation (no-op when it exists) and its touch time (ms since epoch). */
  create(iid: string, at: number): void;
  /** Marks the conversation touched at `at`: the retention clock. */
  touch(iid: string, at: number): void;
  /** Appends one stream event at `position` (its offset). */
  appendEvent(iid: string, position: number, event: StreamEvent): void;
  /** A Submission admitted (open until `settle`). */
  admit(iid: string, submissionId: string, at: number): void;
  settle(iid: string, submissionId: string): void;
  /** The seat's definition, once per conversation (replaced if seated again). */
  putSeat(iid: string, seat: unknown): void;
  /** Appends message JSON texts (replay order) added by `submissionId` from `position` on. */
  appendMessages(iid: string, submissionId: string, position: number, json: readonly string[]): void;
  /** The wire `history` of a conversation (every Submission's messages with the running hash). */
  history(iid: string): ConversationHistory | undefined;
  /**
   * Submissions admitted and never settled, oldest first, per conversation (after a restart:
   * the ones that ran or waited when the process died).
   */
  unsettled(): Array<{ iid: string; submissionId: string }>;
  /** Deletes conversations not touched since `before` (ms since epoch); returns their iids. */
  forgetUntouchedSince(before: number): string[];
  getRecord(kind: string, key: string): unknown;
  putRecord(kind: string, key: string, value: unknown): void;
  deleteRecord(kind: string, key: string): void;
  /** Every record of `kind`, by key order. */
  listRecords(kind: string): HarnessRecord[];
  /**
   * Commits every queued write now (one transaction). When the commit fails (a full disk) the
   * writes stay queued and are retried with backoff, and the error is thrown (ADR-0177).
   */
  flush(): void;
  /** Why the store refuses writes since when; undefined while commits succeed (ADR-0177). */
  failing(): StoreFailure | undefined;
  /** Flushes and closes the file (throws when the last flush fails; the file is closed anyway). */
  close(): void;
}
