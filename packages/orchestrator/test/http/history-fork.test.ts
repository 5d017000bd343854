/**
 * `GET /runs/:runId/history`, `GET /runs/:runId/history/:version` and `POST /runs/:runId/fork`
 * (ADR-0270) over HTTP: the versions with their causes, one whole, a fork that starts at the
 * version with a Turn of its own (an iid under its own runId) and runs to its end, a checked
 * context patch, the instance token only, and 404s naming the run or the version.
 */
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mintSandboxToken } from "../../src/index.js";
import { agentUrl, buildTestApp, call, expectCoded, SANDBOX_KEY, startFlow } from "./fixture.js";

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildTestApp();
});
afterEach(async () => {
  await app.close();
});

/** A flow run with one `note` pick taken, then `finish`: the run waits at its review Gate. */
async function runToGate(): Promise<{ runId: string; iid: string }> {
  const started = await startFlow(app);
  await call(app, "POST", agentUrl(started.iid, "picks"), { name: "note", arguments: {}, toolCallId: "n1" });
  await call(app, "POST", agentUrl(started.iid, "picks"), {
    name: "finish",
    arguments: { summary: "done" },
    toolCallId: "f1",
  });
  return started;
}

/** The newest version whose state value is `working` and whose context has a note. */
// biome-ignore lint/suspicious/noExplicitAny: JSON answers
function noteVersion(versions: any[]): number {
  return versions.filter((v) => v.value === "working" || v.value?.working).at(-1).version as number;
}

describe("a run's history", () => {
  it("lists every save as a numbered version with its state value and cause, and serves one whole", async () => {
    const { runId } = await runToGate();
    const history = await call(app, "GET", `/runs/${runId}/history`);
    expect(history.status).toBe(200);
    const versions = history.body.versions;
    expect(versions.map((v: { version: number }) => v.version)).toEqual(
      versions.map((_: unknown, i: number) => i + 1),
    );
    expect(versions[0].cause).toEqual({ kind: "start" });
    expect(versions.map((v: { cause: { kind: string; name?: string } }) => v.cause.name)).toContain("note");
    const finish = versions.find((v: { cause: { name?: string } }) => v.cause.name === "finish");
    expect(finish).toMatchObject({
      value: "review",
      status: "running",
      cause: { kind: "pick", agent: "worker", child: "working#worker" },
    });

    const one = await call(app, "GET", `/runs/${runId}/history/${finish.version}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      runId,
      version: finish.version,
      value: "review",
      context: { task: "the report", notes: 1 },
      workflow: "flow",
    });
    expect(one.body.snapshot).toMatchObject({ value: "review" });
    expect(JSON.stringify(one.body.ledger)).not.toContain("streamUrl");
  });

  it("answers 404 naming the run or the version (with the kept ones), 400 for a version that is no number", async () => {
    const { runId } = await startFlow(app);
    const noRun = await call(app, "GET", "/runs/nope/history");
    expectCoded(noRun, "JR2_ERR_RUN_NOT_FOUND");
    expect(noRun.body.error).toContain("nope");
    const noVersion = await call(app, "GET", `/runs/${runId}/history/99`);
    expectCoded(noVersion, "JR2_ERR_RUN_VERSION_NOT_FOUND");
    expect(noVersion.body.error).toContain("no version 99");
    expect(noVersion.body.error).toMatch(/kept versions: 1/);
    expect((await call(app, "GET", `/runs/${runId}/history/first`)).status).toBe(400);
  });

  it("takes the instance token only: a sandbox token is refused on history and fork", async () => {
    const { runId } = await startFlow(app);
    const token = mintSandboxToken(SANDBOX_KEY, "instance");
    expectCoded(await call(app, "GET", `/runs/${runId}/history`, undefined, token), "JR2_ERR_AUTH_INVALID");
    expectCoded(await call(app, "GET", `/runs/${runId}/history/1`, undefined, token), "JR2_ERR_AUTH_INVALID");
    expectCoded(await call(app, "POST", `/runs/${runId}/fork`, { at: 1 }, token), "JR2_ERR_AUTH_INVALID");
    expectCoded(await call(app, "GET", `/runs/${runId}/history`, undefined, null), "JR2_ERR_AUTH_MISSING");
  });
});

describe("a fork", () => {
  it("starts a new run at the version's state and context, with a Turn of its own, and runs to its end", async () => {
    const { runId, iid: sourceIid } = await runToGate();
    const before = (await call(app, "GET", `/runs/${runId}/history`)).body;
    const at = noteVersion(before.versions);
    const forked = await call(app, "POST", `/runs/${runId}/fork`, { at, context: { notes: 0 } });
    expect(forked.status).toBe(201);
    expect(forked.body).toEqual({
      runId: expect.any(String),
      forkedFrom: { runId, version: at },
      workspaceEmpty: true,
      // This workflow declares no workspace: none is plain (ADR-0228).
      plainWorkspaces: [],
    });
    expect(before.workspaces).toEqual([]);
    const forkId = forked.body.runId as string;
    expect(forkId).not.toBe(runId);

    const fork = await call(app, "GET", `/runs/${forkId}`);
    expect(fork.body).toMatchObject({
      status: "running",
      value: { working: "idle" },
      context: { task: "the report", notes: 0 },
    });
    const iid = fork.body.turns[0].iid as string;
    expect(iid.startsWith(`${forkId}/`)).toBe(true);
    expect(iid).not.toBe(sourceIid);
    // The source's Turn is not served again: its iid is not a live Turn.
    expectCoded(await call(app, "GET", agentUrl(sourceIid, "surface")), "JR2_ERR_TURN_NOT_FOUND");

    const forkHistory = (await call(app, "GET", `/runs/${forkId}/history`)).body.versions;
    expect(forkHistory[0]).toMatchObject({
      version: 1,
      cause: { kind: "fork", from: { runId, version: at }, by: "http" },
    });
    // No identity of the source is left in the fork's first version: iids, turnIds, ledger.
    const first = (await call(app, "GET", `/runs/${forkId}/history/1`)).body;
    expect(JSON.stringify(first.snapshot)).not.toContain(runId);
    const source = (await call(app, "GET", `/runs/${runId}/history/${at}`)).body;
    expect(JSON.stringify(first)).not.toContain(source.ledger[0]?.turnId ?? "no ledger");
    expect(first).toMatchObject({ ledger: [], epochs: {}, context: { notes: 0 } });

    // The fork goes on on its own: finish, then the Gate approves (the patched context has no notes).
    const picked = await call(app, "POST", agentUrl(iid, "picks"), {
      name: "finish",
      arguments: { summary: "again" },
      toolCallId: "f1",
    });
    expect(picked.body).toMatchObject({ delivered: true, moved: true });
    const approved = await call(app, "POST", `/runs/${forkId}/gates/review_gate/events`, { type: "approve" });
    expect(approved.status).toBe(200);
    expect((await call(app, "GET", `/runs/${forkId}`)).body).toMatchObject({ status: "done", value: "done" });

    // The source is untouched: its versions as they were, still at its Gate.
    expect((await call(app, "GET", `/runs/${runId}/history`)).body).toEqual(before);
    expect((await call(app, "GET", `/runs/${runId}`)).body).toMatchObject({
      status: "running",
      value: "review",
    });
  });

  it("refuses a bad context patch (400 naming the key), an unknown version (404) and a bad body (400)", async () => {
    const { runId } = await runToGate();
    const unknownKey = await call(app, "POST", `/runs/${runId}/fork`, { at: 1, context: { note: 3 } });
    expectCoded(unknownKey, "JR2_ERR_FORK_CONTEXT_INVALID");
    expect(unknownKey.body.error).toContain("`context.note` is not in the context (its keys: task, notes)");
    const wrongKind = await call(app, "POST", `/runs/${runId}/fork`, { at: 1, context: { notes: "none" } });
    expectCoded(wrongKind, "JR2_ERR_FORK_CONTEXT_INVALID");
    expect(wrongKind.body.error).toContain(
      "`context.notes` is number in the context; the patch gives string",
    );
    // A token in a URL is refused before it is kept (ADR-0297), named but never quoted.
    const token = await call(app, "POST", `/runs/${runId}/fork`, {
      at: 1,
      context: { task: "https://git.home/a/app.git?access_token=s3cr3tTOKEN" },
    });
    expectCoded(token, "JR2_ERR_FORK_CONTEXT_INVALID");
    expect(token.body.error).toContain(
      "task is a URL holding a credential (the `access_token=` query parameter)",
    );
    expect(token.body.error).toContain("JR2_GIT_TOKEN_FILE");
    expect(token.body.error).not.toContain("s3cr3tTOKEN");
    const noVersion = await call(app, "POST", `/runs/${runId}/fork`, { at: 500 });
    expectCoded(noVersion, "JR2_ERR_RUN_VERSION_NOT_FOUND");
    expect(noVersion.body.error).toContain("no version 500");
    expect((await call(app, "POST", `/runs/${runId}/fork`, { at: 0 })).status).toBe(400);
    expectCoded(await call(app, "POST", "/runs/nope/fork", { at: 1 }), "JR2_ERR_RUN_NOT_FOUND");
    // Nothing was forked by a refusal.
    expect(
      (await call(app, "GET", "/runs")).body.runs ?? (await call(app, "GET", "/runs")).body,
    ).toHaveLength(1);
  });
});
