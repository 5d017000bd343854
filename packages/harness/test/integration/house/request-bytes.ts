/**
 * The request bodies the conformance tier records for the plain review loop (`review.ts` of
 * packages/orchestrator/test/fixtures/plain-review, ADR-0228) and `triage.ts` on model-sim (issue 23, "Bytes unchanged"), driven as the tier drives them
 * (packages/conformance/test/review.test.ts and turns.test.ts's wake): the real Orchestrator and
 * Harness as built binaries, model-sim as a process.
 *
 * Before hashing, each body has these fields replaced by fixed placeholders, because they differ
 * from one run to the next and say nothing about the bytes the Harness composes:
 *   - runIds (`<run-N>`), the Orchestrator's uuid for each run, numbered by first appearance;
 *   - iids (`<iid-N>`), each Agent invocation's id (it carries the runId), numbered likewise;
 *   - turnIds (`<turn-N>`), numbered likewise;
 *   - absolute work paths (`<work>`): the Orchestrator's data folder, the Worktrees below it and
 *     the test's temporary folders (any `/tmp/…` or os.tmpdir() path up to the next quote, space
 *     or newline), where the Turn part names the working directory or a tool result names a file;
 *   - tool call ids (`<call-N>`): model-sim names each call `chatcmpl-tool-<16 hex>` from a
 *     digest of the whole request body, so they follow the work paths above; numbered likewise;
 *   - any other uuid (`<uuid-N>`), e.g. a Submission id, numbered likewise.
 * Everything else — the tools block, the system prompt, the Turn part, the Allowed line,
 * receipts, restatements, nudges, notices, tool results, tool call names and arguments, key
 * order and whitespace — is hashed as sent.
 */
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import {
  missingBinaries,
  type RecordedRequest,
  type Stack,
  startStack,
} from "../../../../conformance/src/index.js";

export const repoRoot = fileURLToPath(new URL("../../../../../", import.meta.url));
const examplesDir = fileURLToPath(
  new URL("../../../../orchestrator/test/fixtures/plain-review/", import.meta.url),
);

/** The built binaries the stack needs that are missing (run `pnpm build`). */
export const missing = missingBinaries(repoRoot, "process");

/** The model table of review.test.ts (coder, reviewer, triager). */
const MODELS = { coder: "worker:1", reviewer: "script:request_changes,approve", triager: "obedient" };

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Replaces the fields the header names with numbered placeholders, in order of appearance. */
export function normalize(raw: string, ids: { runIds: string[]; iids: string[]; turnIds: string[] }): string {
  const numbered = new Map<string, string>();
  const name = (kind: string, list: readonly string[]) => {
    for (const [i, id] of list.entries()) numbered.set(id, `<${kind}-${i + 1}>`);
  };
  // Longest first: an iid contains its runId.
  name("iid", ids.iids);
  name("turn", ids.turnIds);
  name("run", ids.runIds);
  let out = raw;
  for (const [id, placeholder] of [...numbered].sort((a, b) => b[0].length - a[0].length))
    out = out.split(id).join(placeholder);
  const tmp = tmpdir().replace(/\/+$/, "");
  const roots = [...new Set([tmp, "/tmp"])].map((r) => r.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  out = out.replace(new RegExp(`(?:${roots.join("|")})/[^"'\\s\\\\]*`, "g"), "<work>");
  const calls = new Map<string, string>();
  out = out.replace(/chatcmpl-tool-[0-9a-f]{16}/g, (c) => {
    if (!calls.has(c)) calls.set(c, `<call-${calls.size + 1}>`);
    return calls.get(c)!;
  });
  const others = new Map<string, string>();
  out = out.replace(UUID, (u) => {
    if (!others.has(u)) others.set(u, `<uuid-${others.size + 1}>`);
    return others.get(u)!;
  });
  return out;
}

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

interface RunDetail {
  status: string;
  turns: Array<{ iid: string; turnId: string | null }>;
  gates: Array<{ id: string }>;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether the Harness has settled at least one Submission of `iid` (its history, §7.1). */
async function settledOnce(stack: Stack, iid: string): Promise<boolean> {
  const res = await fetch(`${stack.harnessUrl}/conversations/${encodeURIComponent(iid)}/history`, {
    headers: { authorization: `Bearer ${stack.harnessToken}` },
  });
  if (res.status !== 200) return false;
  return ((await res.json()) as { settlements: unknown[] }).settlements.length > 0;
}

/**
 * Runs one workflow to `done` on a fresh stack, answering its one Gate, and returns every
 * answered request body model-sim recorded (oldest first), normalized, with the ids it saw.
 */
async function runOnce(workflow: "review" | "triage", input: unknown, gate: string, event: string) {
  const stack: Stack = await startStack("process", {
    repoRoot,
    workflowsDir: examplesDir,
    models: (baseUrl) =>
      Object.fromEntries(
        Object.entries(MODELS).map(([n, id]) => [n, { baseUrl, id, contextWindow: 32768, maxTokens: 1024 }]),
      ),
  });
  try {
    const headers = { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" };
    const started = await fetch(`${stack.orchestratorUrl}/workflows/${workflow}/runs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ input }),
    });
    if (started.status !== 201) throw new Error(`starting ${workflow}: ${started.status}`);
    const { runId } = (await started.json()) as { runId: string };
    const view = async () =>
      (await (await fetch(`${stack.orchestratorUrl}/runs/${runId}`, { headers })).json()) as RunDetail;
    const iids = new Set<string>();
    const turnIds = new Set<string>();
    const seen = (v: RunDetail) => {
      for (const t of v.turns) {
        iids.add(t.iid);
        if (t.turnId) turnIds.add(t.turnId);
      }
      return v;
    };
    await until(`${workflow}'s ${gate}`, async () => {
      const v = seen(await view());
      if (v.status !== "running") throw new Error(`${workflow} settled ${v.status} before ${gate}`);
      if (!v.gates.some((g) => g.id === gate)) return undefined;
      // As the tier's wake (turns.test.ts C5): the Gate is answered once every Agent that is
      // registered has had a Submission settled, so the triager is asked once with no pick open.
      for (const iid of iids) if (!(await settledOnce(stack, iid))) return undefined;
      return true;
    });
    const sent = await fetch(`${stack.orchestratorUrl}/runs/${runId}/gates/${gate}/events`, {
      method: "POST",
      headers,
      body: JSON.stringify({ type: event }),
    });
    if (sent.status !== 200) throw new Error(`${gate}: ${sent.status}`);
    const done = await until(`${workflow} to settle`, async () => {
      const v = seen(await view());
      return v.status === "running" ? undefined : v;
    });
    if (done.status !== "done") throw new Error(`${workflow} settled ${done.status}`);
    const recorded: RecordedRequest[] = await stack.requests();
    const bodies = [...recorded]
      .filter((r) => r.status === 200)
      .sort((a, b) => a.seq - b.seq)
      .map((r) => ({ model: r.model, raw: r.raw }));
    return { bodies, runIds: [runId], iids: [...iids], turnIds: [...turnIds] };
  } finally {
    await stack.close();
  }
}

/** Model name → the sha256 of each answered request body of that model, oldest first. */
export type BodyHashes = Record<string, string[]>;

/** Runs `review` (coder, reviewer; merge Gate) and `triage` (triager; confirm Gate) and hashes every body. */
export async function requestBytesNow(): Promise<{
  review: BodyHashes;
  triage: BodyHashes;
  samples: string[];
}> {
  const out = { review: {} as BodyHashes, triage: {} as BodyHashes, samples: [] as string[] };
  // One stack per workflow, as the tier runs them; the order of `runs` is the order of the pin.
  const runs = [
    ["review", { task: "a hello() function in hello.js" }, "merge_gate", "merge"],
    ["triage", undefined, "confirm_gate", "confirm"],
  ] as const;
  for (const [workflow, input, gate, event] of runs) {
    const r = await runOnce(workflow, input, gate, event);
    for (const b of r.bodies) {
      const text = normalize(b.raw, r);
      out.samples.push(text);
      const hashes = out[workflow][b.model] ?? [];
      hashes.push(sha256(text));
      out[workflow][b.model] = hashes;
    }
  }
  return out;
}
