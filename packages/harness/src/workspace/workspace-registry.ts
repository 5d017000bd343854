/**
 * One attached Repo Slot as the Harness remembers it across restarts (issue 28 §2, §6).
 * The URL is kept redacted-free only as the operator gave it (credentials are refused in URLs).
 */
export interface SlotRecord {
  runId: string;
  workflow: string;
  workspace: string;
  slot: string;
  /** The slot's URL as given (accepted by repo-url.ts), and the push URL when it differs. */
  url: string;
  /** The slot's `ref` as given (absent: the remote's HEAD). Absent in records made before it was kept. */
  ref?: string;
  pushUrl?: string;
  /** The run's repository and its Worktree (slot-paths.ts). */
  repo: string;
  worktree: string;
  branch: string;
  /** The commit the branch started from. */
  base: string;
  /** Submodule paths at `base`, left empty in the Worktree (ADR-0216). */
  submodules?: string[];
  /** Epoch ms of the attach. */
  attachedAt: number;
  /** Epoch ms the Worktree was removed by clean-up, if it was. */
  removedAt?: number;
  /** How many rescue refs were made (the next is `before-<op>-<n+1>`). */
  rescues: number;
  /** The last pushed commit, once published. */
  pushed?: { commit: string; url: string; at: number };
}

/**
 * The port the `workspace/` room keeps its records through (a lower folder's port, ADR-0160's layers):
 * the Harness's durable store (conversations/store/, a `harness_records` kind `repo-slot`, wired
 * in wire/durable-ports.ts) implements it above this folder; {@link createMemoryWorkspaceRegistry} is the
 * default and the tests'. Keys are `<runId>/<workspace>/<slot>` (slot-paths.ts `slotKey`).
 */
export interface WorkspaceRegistryStore {
  get(key: string): Promise<SlotRecord | undefined>;
  put(key: string, record: SlotRecord): Promise<void>;
  delete(key: string): Promise<void>;
  list(): Promise<SlotRecord[]>;
}

/** The in-memory registry: lost on restart (the durable one is wired by the Harness's store). */
export function createMemoryWorkspaceRegistry(): WorkspaceRegistryStore {
  const records = new Map<string, SlotRecord>();
  return {
    async get(key) {
      const r = records.get(key);
      return r && structuredClone(r);
    },
    async put(key, record) {
      records.set(key, structuredClone(record));
    },
    async delete(key) {
      records.delete(key);
    },
    async list() {
      return [...records.values()].map((r) => structuredClone(r));
    },
  };
}
