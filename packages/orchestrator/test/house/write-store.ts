// Writes fixtures/main-store/ from this tree (run once, on main before the house's first move;
// run it as write-pin.ts says, with its file name):
// live runs of both example workflows at each kind of place a restore must find again.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRunHost, INSTANCE_CALLER, loadWorkflows, openSqliteStore } from "../../src/index.js";

const out = fileURLToPath(new URL("./fixtures/main-store/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "jr2-house-store-"));
const workflows = await loadWorkflows(fileURLToPath(new URL("../fixtures/plain-review", import.meta.url)));
const host = createRunHost({ workflows, store: openSqliteStore(dir) });

async function pick(runId: string, agent: string, name: string, args: Record<string, unknown>) {
  const run = await host.getRun(runId);
  const turn = run.turns.find((t) => t.agent === agent);
  if (!turn) throw new Error(`no ${agent} Turn in ${runId}: ${JSON.stringify(run.turns)}`);
  const answer = await host.deliverPick(turn.iid, INSTANCE_CALLER, {
    turnId: turn.turnId ?? undefined,
    toolCallId: `call-${name}`,
    name,
    arguments: args,
  });
  if (!answer.delivered) throw new Error(`${name} not delivered: ${JSON.stringify(answer)}`);
}

const coding = (await host.startRun("review", { task: "a hello() function" })).runId;
const reviewing = (await host.startRun("review", { task: "a bye() function" })).runId;
await pick(reviewing, "coder", "finish", { summary: "wrote bye()" });
const fixing = (await host.startRun("review", { task: "a hi() function" })).runId;
await pick(fixing, "coder", "finish", { summary: "wrote hi()" });
await pick(fixing, "reviewer", "request_changes", { comments: ["name it greet()"] });
const triaging = (await host.startRun("triage", { report: "the login page is blank" })).runId;
const confirmed = (await host.startRun("triage", { report: "the logout button is gone" })).runId;
await host.sendGateEvent(confirmed, "confirm_gate", { type: "confirm" });

const expected: Record<string, unknown> = {};
for (const runId of [coding, reviewing, fixing, triaging, confirmed]) {
  const run = await host.getRun(runId);
  expected[runId] = {
    workflow: run.workflow,
    status: run.status,
    value: run.value,
    context: run.context,
    turns: run.turns,
    gates: run.gates.map((g) => g.id),
  };
}
await host.close();
rmSync(out, { recursive: true, force: true });
cpSync(dir, out, { recursive: true });
rmSync(dir, { recursive: true, force: true });
writeFileSync(join(out, "expected.json"), `${JSON.stringify(expected, null, 2)}\n`);
