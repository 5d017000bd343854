import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import type { SlotRecord, WorkspaceRegistryStore } from "./workspace-registry.js";

/**
 * The Repo Slot registry with a copy of each record on the node's disk, beside the run's
 * repository (`<workRoot>/.repos/<runId>/<workspace>/<slot>.json`, outside the git directory,
 * so never bound into a sandbox, ADR-0214). Why: a Harness restarted without a durable store
 * (`JR2_HARNESS_DATA_DIR` unset), or with a new one, forgot every slot, and a pick after the
 * restart went out with no commit — the Worktree's changes silently not recorded (the
 * SIGKILL soak found it, ADR-0217). Reads fall back to the disk copy when the store has none;
 * writes go to both. The copy holds what the store does (URLs carry no credentials: refused).
 */
export function withDiskRecords(inner: WorkspaceRegistryStore, workRoot: string): WorkspaceRegistryStore {
  const repos = join(workRoot, ".repos");
  const fileOf = (key: string) => join(repos, `${key}.json`);
  return {
    async get(key) {
      return (await inner.get(key)) ?? (await readRecord(fileOf(key)));
    },
    async put(key, record) {
      await inner.put(key, record);
      await writeRecord(fileOf(key), record);
    },
    async delete(key) {
      await inner.delete(key);
      await rm(fileOf(key), { force: true });
    },
    async list() {
      const known = await inner.list();
      const byKey = new Map(known.map((r) => [`${r.runId}/${r.workspace}/${r.slot}`, r]));
      for (const file of await recordFiles(repos)) {
        const r = await readRecord(file);
        if (!r) continue;
        const key = `${r.runId}/${r.workspace}/${r.slot}`;
        const stored = byKey.get(key);
        if (!stored) known.push(r);
        // A copy behind the store (a Harness killed between the two writes, e.g. a removal's
        // `removedAt`) is written again: the node's copy never claims a Worktree the store knows gone.
        else if (JSON.stringify(stored) !== JSON.stringify(r)) await writeRecord(fileOf(key), stored);
      }
      return known;
    },
  };
}

// The three components of a key (slot-paths.ts's NAME): no `.`-leading part, no separator.
const PART = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * The registry key of the slot whose Worktree holds `path` by its place under the work root
 * (`<workRoot>/<runId>/<workspace>/<slot>/…`), or undefined when the path is not there.
 */
export function keyOfPath(workRoot: string, path: string): string | undefined {
  const parts = relative(workRoot, path).split(sep);
  if (parts.length < 3 || !parts.slice(0, 3).every((p) => PART.test(p))) return undefined;
  return parts.slice(0, 3).join("/");
}

let writes = 0;
/**
 * Writes a record's copy atomically: a temporary file of its own (two writers of one record —
 * a put and a list's repair — never share one) renamed over it.
 */
async function writeRecord(file: string, record: SlotRecord): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}-${++writes}.tmp`;
  await writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

async function readRecord(file: string): Promise<SlotRecord | undefined> {
  try {
    const r = JSON.parse(await readFile(file, "utf8")) as SlotRecord;
    return typeof r.runId === "string" && typeof r.worktree === "string" ? r : undefined;
  } catch {
    return undefined;
  }
}

/** Every `<runId>/<workspace>/<slot>.json` under `.repos`. */
async function recordFiles(repos: string): Promise<string[]> {
  const dirs = async (d: string) =>
    (await readdir(d, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory());
  const out: string[] = [];
  for (const run of await dirs(repos))
    for (const ws of await dirs(join(repos, run.name))) {
      const at = join(repos, run.name, ws.name);
      for (const f of await readdir(at).catch(() => [] as string[]))
        if (f.endsWith(".json")) out.push(join(at, f));
    }
  return out;
}
