/**
 * The drifting workflow of the drift tests (ADR-0271): `durable`, whose variants change its
 * shape three ways, and a run of it saved mid-Turn in a SQLite store, its Turns on a fake Harness
 * that admits and never settles (never-settling-harness.ts).
 * Shared by resume-drifted.test.ts and the drift-follows-fingerprints regression.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { openSqliteStore } from "../src/durability/store/sqlite.js";
import { agent, createRunHost, defineEvent, jr2Setup } from "../src/index.js";
import { neverSettlingHarness, placement } from "./never-settling-harness.js";

export const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const note = defineEvent({ name: "note", description: "Note something.", audience: "agent" });
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });

/** `working` (a continued Turn) → `waiting` (a Gate) → done; variants drift it three ways. */
export function machine(variant: "v1" | "extra-state" | "menu-changed" | "working-removed" = "v1") {
  const working = variant === "working-removed" ? "labouring" : "working";
  return jr2Setup({
    events: [finish, note, approve],
    actors: { worker: agent({ model: "m", instructions: "work" }) },
  }).createMachine({
    id: "durable",
    initial: working,
    states: {
      [working]: {
        invoke: { src: "worker", input: { prompt: "Do the work.", continue: true } },
        on: {
          finish: "waiting",
          ...(variant === "menu-changed" ? { note: {} } : {}),
          "agent.fault": "failed",
        },
      },
      waiting: { invoke: { src: "gate", id: "approve_gate" }, on: { approve: "done" } },
      done: { type: "final" },
      failed: { type: "final" },
      ...(variant === "extra-state" ? { extra: {} } : {}),
    },
  });
}

export async function until(check: () => boolean | Promise<boolean>, label: string): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  if (!(await check())) throw new Error(`never reached: ${label}`);
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh directory for a SQLite store, removed after the test. */
export function storeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "jr2-drift-"));
  dirs.push(dir);
  return dir;
}

/**
 * A run of `durable` v1 saved mid-Turn: a first host on a fresh SQLite store started it, saw its
 * Turn admitted (`iid`) and closed. `hostOf(m)` opens another host on that store and the same
 * fake Harness, serving `m` as `durable` (call its `restore()`).
 */
export async function runSavedMidTurn() {
  const dir = storeDir();
  const harness = neverSettlingHarness();
  const hostOf = (m: ReturnType<typeof machine>) =>
    createRunHost({
      workflows: new Map([["durable", m]]),
      store: openSqliteStore(dir),
      turnDriver: harness.driver,
      placement,
    });
  const first = hostOf(machine());
  await first.restore();
  const { runId } = await first.startRun("durable", {});
  await until(() => harness.admissions.length === 1, "first admission");
  const iid = (await first.getRun(runId)).turns[0]!.iid;
  await first.close();
  return { hostOf, runId, iid, harness };
}
