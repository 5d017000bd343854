/** `jr2 history` and `jr2 fork`'s text (ADR-0270): the version table, the causes, `--at <state>` matching, the fork lines. */
import type { RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { createActor, createMachine } from "xstate";
import { workspace } from "../src/authoring/workspace.js";
import { formatFeedEvent } from "../src/cli/feed-printer.js";
import { formatCause, formatFork, formatHistory, statesOf } from "../src/cli/history-command.js";
import { stateLine } from "../src/cli/history-states.js";

const at = "2026-12-01T09:00:00.000Z";

describe("jr2 history and jr2 fork", () => {
  it("print one line per version with its time, status, state and cause", () => {
    const text = formatHistory({
      runId: "run-1",
      versions: [
        { version: 1, at, value: "working", status: "running", cause: { kind: "start" } },
        {
          version: 2,
          at,
          value: { work: "triaging", human: "asking" },
          status: "running",
          cause: { kind: "pick", child: "work.triaging#triager", agent: "triager", name: "assign" },
        },
      ],
    });
    expect(text).toBe(
      "run-1: 2 versions kept\n" +
        "     v  at        status    state                    cause\n" +
        "     1  09:00:00  running   working                  start\n" +
        "     2  09:00:00  running   work.triaging, human.asking pick assign (work.triaging#triager)\n",
    );
    // A Repo Slot run's version names the commit a fork or a retry from it checks out (issue 28).
    const withFiles = formatHistory({
      runId: "run-2",
      versions: [
        { version: 1, at, value: "working", status: "running", cause: { kind: "start" } },
        {
          version: 2,
          at,
          value: "working",
          status: "running",
          cause: { kind: "pick", child: "working#coder", agent: "coder", name: "finish" },
          workspace: { "code/app": "0123456789abcdef0123456789abcdef01234567" },
        },
      ],
    });
    expect(withFiles).toContain("     1  09:00:00  running   working                  start\n");
    expect(withFiles).toContain("pick finish (working#coder)  [code/app @ 0123456789ab]\n");
    expect(formatCause({ kind: "gate", gate: "merge_gate", event: "merge", by: "cli" })).toBe(
      "Gate merge_gate ← merge (by cli)",
    );
    expect(formatCause({ kind: "fork", from: { runId: "run-0", version: 7 }, by: "http" })).toBe(
      "forked from run-0@7 (by http)",
    );
    // A Machine fault in the initial macrostep, retried (ADR-0272); the run's own start stays `start`.
    expect(formatCause({ kind: "start", by: "cli" })).toBe("started again from its input (retry by cli)");
    expect(formatCause({ kind: "start" })).toBe("start");
  });

  it("show a workspace() workflow's body state beside the root's, as a nested state shows for other workflows", () => {
    // A real persisted snapshot: the root in `working`, invoking workspace(body), the body in `implement`.
    const body = createMachine({ id: "body", initial: "implement", states: { implement: {}, review: {} } });
    const root = createMachine({
      id: "review",
      initial: "working",
      states: { working: { invoke: { id: "work", src: workspace(body, { name: "review" }) } } },
    });
    const actor = createActor(root).start();
    const snapshot = actor.getPersistedSnapshot() as unknown as { value: unknown };
    actor.stop();
    const history = {
      runId: "run-1",
      versions: [
        {
          version: 1,
          at,
          value: snapshot.value,
          status: "running" as const,
          cause: { kind: "start" as const },
        },
      ],
    };
    expect(formatHistory(history, new Map([[1, stateLine(snapshot.value, snapshot)]]))).toContain(
      "     1  09:00:00  running   working › implement      start\n",
    );
    // Without a snapshot (a version folded meanwhile): the root's value, as before.
    expect(formatHistory(history)).toContain("     1  09:00:00  running   working                  start\n");
  });

  it("match --at <state> against every state a value names, nested or dotted", () => {
    const states = statesOf({ work: { triaging: "waiting" }, human: "asking" });
    for (const s of ["work", "triaging", "waiting", "work.triaging", "work.triaging.waiting", "human.asking"])
      expect(states.has(s), s).toBe(true);
    expect(states.has("assigned")).toBe(false);
  });

  it("say where the fork's files start — only what the run has (ADR-0228) — and print the fork lines of the feed", () => {
    const fork = {
      runId: "run-2",
      forkedFrom: { runId: "run-1", version: 7 },
      workspaceEmpty: true,
    } as const;
    // All Repo Slots: only the slots' commits, no word of a plain workspace.
    const slotsOnly = formatFork({ ...fork, repos: { "review/app": "a".repeat(40) }, plainWorkspaces: [] });
    expect(slotsOnly).toBe(
      "forked run-1@7 → run-2\n  its Repo Slots start at version 7's commits: review/app @ aaaaaaaaaaaa\n  follow it: jr2 follow run-2\n",
    );
    expect(slotsOnly).not.toContain("plain");
    expect(slotsOnly).not.toContain("empty");
    // Only a plain workspace: named, with its empty directory.
    const plainOnly = formatFork({ ...fork, plainWorkspaces: ["review"] });
    expect(plainOnly).toContain("forked run-1@7 → run-2");
    expect(plainOnly).toContain(
      "its plain workspace `review` (no Repo Slot) starts with an empty directory under run-2 (files are carried only by Repo Slots)",
    );
    expect(plainOnly).not.toContain("Repo Slots start");
    // Both: both said.
    const both = formatFork({
      ...fork,
      repos: { "code/app": "b".repeat(40) },
      plainWorkspaces: ["notes", "scratch"],
    });
    expect(both).toContain("its Repo Slots start at version 7's commits: code/app @ bbbbbbbbbbbb");
    expect(both).toContain(
      "its plain workspaces `notes`, `scratch` (no Repo Slot) start with an empty directory under run-2\n",
    );
    // An older Orchestrator's answer (no `plainWorkspaces`): read as before.
    expect(formatFork(fork)).toContain(
      "it has no Repo Slots: its plain workspace directory starts empty under run-2",
    );
    expect(formatFork({ ...fork, repos: { "code/app": "a".repeat(40) } })).toContain(
      "a plain workspace directory (no Repo Slot) starts empty under run-2",
    );
    const to = { type: "forked-to", seq: 9, at, runId: "run-2", version: 7, by: "cli" } as RunFeedEvent;
    expect(formatFeedEvent(to, "run-1")).toBe("09:00:00  forked    to run-2 from version 7 (by cli)");
    const from = {
      type: "forked-from",
      seq: 0,
      at,
      runId: "run-1",
      version: 7,
      by: "cli",
      value: "review",
      context: {},
    } as RunFeedEvent;
    expect(formatFeedEvent(from, "run-2")).toBe("09:00:00  forked    from run-1@7 (by cli) at review");
  });
});
