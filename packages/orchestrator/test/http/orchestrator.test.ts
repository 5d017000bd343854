import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mintSandboxToken } from "../../src/index.js";
import {
  agentUrl,
  buildTestApp,
  call,
  expectCoded,
  INSTANCE_TOKEN,
  SANDBOX_KEY,
  startFlow,
} from "./fixture.js";

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildTestApp();
});
afterEach(async () => {
  await app.close();
});

describe("runs and the Turn's surface", () => {
  it("starts a run; GET /runs lists it; its Turn's surface serves the Menu and the Allowed picks", async () => {
    const { runId, iid } = await startFlow(app);
    const runs = await call(app, "GET", "/runs");
    expect(runs.body).toEqual([expect.objectContaining({ runId, workflow: "flow", status: "running" })]);
    expect((await call(app, "GET", "/runs?status=done")).body).toEqual([]);

    expect(iid.startsWith(`${runId}/`)).toBe(true);
    const surface = await call(app, "GET", agentUrl(iid, "surface"));
    expect(surface.status).toBe(200);
    expect(surface.body).toMatchObject({ iid, runId, agent: "worker" });
    expect(surface.body.menu.map((t: { name: string }) => t.name)).toEqual([
      "check",
      "escalate",
      "finish",
      "fixed",
      "note",
    ]);
    expect(surface.body.allowed).toEqual(["check", "escalate", "finish", "note"]);
  });

  it("refuses a start whose input fails the workflow's schema, naming the field", async () => {
    const res = await call(app, "POST", "/workflows/flow/runs", { input: { task: "" } });
    expectCoded(res, "JR2_ERR_RUN_INPUT_INVALID");
    expect(res.body.error).toContain("task");
    expect(res.body.issues[0].path).toEqual(["task"]);
  });

  it("answers 404 for an unknown workflow, naming the known ones", async () => {
    const res = await call(app, "POST", "/workflows/nope/runs", { input: {} });
    expectCoded(res, "JR2_ERR_WORKFLOW_NOT_FOUND");
    expect(res.body.known).toEqual(["flow"]);
  });
});

describe("pick answers over HTTP (§4.3)", () => {
  const pick = (app: FastifyInstance, iid: string, name: string, args: unknown, toolCallId: string) =>
    call(app, "POST", agentUrl(iid, "picks"), { name, arguments: args, toolCallId });

  it("answers each class: in-state move, guard refusal, invalid arguments, off-menu, another state's pick, Turn over", async () => {
    const { runId, iid } = await startFlow(app);

    const noted = await pick(app, iid, "note", {}, "c1");
    expect(noted.body).toEqual({
      delivered: true,
      moved: true,
      turnComplete: false,
      allowed: ["check", "escalate", "finish", "note"],
    });

    const low = await pick(app, iid, "escalate", { severity: "low" }, "c2");
    expect(low.body).toMatchObject({ delivered: true, moved: false, turnComplete: false });
    expect(low.body.allowed).toContain("escalate");

    const invalid = await pick(app, iid, "finish", {}, "c3");
    expect(invalid.body).toMatchObject({
      delivered: false,
      refusal: "invalid-arguments",
      turnComplete: false,
    });
    expect(invalid.body.issues[0].path).toEqual(["summary"]);

    const offMenu = await pick(app, iid, "run_tests", {}, "c4");
    expect(offMenu.body).toMatchObject({ delivered: false, refusal: "off-menu", turnComplete: false });

    const otherState = await pick(app, iid, "fixed", {}, "c5");
    expect(otherState.body).toEqual({
      delivered: false,
      moved: false,
      turnComplete: false,
      allowed: ["check", "escalate", "finish", "note"],
    });

    const finished = await pick(app, iid, "finish", { summary: "done" }, "c6");
    expect(finished.body).toEqual({ delivered: true, moved: true, turnComplete: true, allowed: [] });
    expect((await call(app, "GET", `/runs/${runId}`)).body.value).toBe("review");

    const after = await pick(app, iid, "note", {}, "c7");
    expectCoded(after, "JR2_ERR_TURN_NOT_FOUND");
    expectCoded(await call(app, "GET", agentUrl(iid, "surface")), "JR2_ERR_TURN_NOT_FOUND");
  });

  it("refuses every pick as busy while a child runs below the Turn's state", async () => {
    const { iid } = await startFlow(app);
    const checking = await pick(app, iid, "check", {}, "b1");
    expect(checking.body).toEqual({ delivered: true, moved: true, turnComplete: false, allowed: [] });
    const busy = await pick(app, iid, "finish", { summary: "x" }, "b2");
    expect(busy.body).toEqual({ delivered: false, refusal: "busy", turnComplete: false, allowed: [] });
    expect((await call(app, "GET", agentUrl(iid, "surface"))).body.allowed).toEqual([]);
  });

  it("answers a repeated toolCallId with the stored answer; the Machine never sees it again", async () => {
    const { runId, iid } = await startFlow(app);
    const first = await pick(app, iid, "note", {}, "same-id");
    const again = await pick(app, iid, "note", {}, "same-id");
    expect(again.body).toEqual(first.body);
    expect((await call(app, "GET", `/runs/${runId}`)).body.context.notes).toBe(1);

    // Even after the Turn ended, the stored answer is served, not a 404.
    const done = await pick(app, iid, "finish", { summary: "ok" }, "end-id");
    expect((await pick(app, iid, "finish", { summary: "ok" }, "end-id")).body).toEqual(done.body);
  });

  it("serves the pick on the run feed without the iid", async () => {
    const { runId, iid } = await startFlow(app);
    await pick(app, iid, "finish", { summary: "ok" }, "f1");
    await call(app, "POST", `/runs/${runId}/cancel`);
    const res = await app.inject({
      method: "GET",
      url: `/runs/${runId}/events`,
      headers: { authorization: `Bearer ${INSTANCE_TOKEN}` },
    });
    expect(res.headers["content-type"]).toContain("text/event-stream");
    expect(res.body).toContain("event: pick");
    expect(res.body).toContain('"status":"cancelled"');
    expect(res.body).not.toContain(iid);
  });
});

describe("Gates over HTTP (§6)", () => {
  it("lists the open Gate with accepts and acceptsNow; 409 with acceptsNow; 400s; 200 moves the run", async () => {
    const { runId, iid } = await startFlow(app);
    await call(app, "POST", agentUrl(iid, "picks"), { name: "note", arguments: {}, toolCallId: "n" });
    await call(app, "POST", agentUrl(iid, "picks"), {
      name: "finish",
      arguments: { summary: "s" },
      toolCallId: "f",
    });

    const run = await call(app, "GET", `/runs/${runId}`);
    expect(run.body.gates).toEqual([
      expect.objectContaining({
        id: "review_gate",
        acceptsNow: ["reject"],
        meta: { question: "Is the work good?" },
      }),
    ]);
    expect(run.body.gates[0].accepts.map((t: { name: string }) => t.name)).toEqual(["approve", "reject"]);

    const gateUrl = `/runs/${runId}/gates/review_gate/events`;
    const notNow = await call(app, "POST", gateUrl, { type: "approve" });
    expectCoded(notNow, "JR2_ERR_GATE_NOT_NOW");
    expect(notNow.body.acceptsNow).toEqual(["reject"]);

    expectCoded(await call(app, "POST", gateUrl, { type: "finish" }), "JR2_ERR_GATE_EVENT_NOT_ACCEPTED");
    expectCoded(await call(app, "POST", gateUrl, { type: "reject" }), "JR2_ERR_GATE_PAYLOAD_INVALID");
    expectCoded(
      await call(app, "POST", `/runs/${runId}/gates/nope/events`, { type: "reject" }),
      "JR2_ERR_GATE_NOT_FOUND",
    );

    const moved = await call(app, "POST", gateUrl, { type: "reject", reason: "add tests" });
    expect(moved).toEqual({ status: 200, body: { moved: true } });
    const after = await call(app, "GET", `/runs/${runId}`);
    expect(after.body.value).toBe("fixing");
    expect(after.body.gates).toEqual([]);
    expect(after.body.turns).toEqual([expect.objectContaining({ agent: "worker", state: "fixing" })]);
  });
});

describe("workflows", () => {
  it("publishes the input schema and, per Machine, each Agent's Menu and derived sets", async () => {
    const list = await call(app, "GET", "/workflows", undefined, null);
    expect(list.body).toEqual([
      {
        name: "flow",
        input: expect.objectContaining({ type: "object" }),
        machines: [{ path: "", agents: ["worker"] }],
      },
    ]);
    const menu = await call(app, "GET", "/workflows/flow/menu", undefined, null);
    expect(menu.status).toBe(200);
    const worker = menu.body.machines[0].agents.worker;
    expect(worker.menu.map((t: { name: string }) => t.name)).toEqual([
      "check",
      "escalate",
      "finish",
      "fixed",
      "note",
    ]);
    expect(worker.states).toEqual({ working: ["check", "escalate", "finish", "note"], fixing: ["fixed"] });
    expectCoded(
      await call(app, "GET", "/workflows/nope/menu", undefined, null),
      "JR2_ERR_WORKFLOW_NOT_FOUND",
    );
  });

  it("serves OpenAPI generated from the route schemas", async () => {
    const res = await call(app, "GET", "/openapi.json", undefined, null);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        "/healthz",
        "/workflows/{name}/menu",
        "/agents/{iid}/picks",
        "/runs/{runId}/gates/{gateId}/events",
      ]),
    );
  });
});

describe("bad input never answers 5xx", () => {
  it("malformed JSON → 400 JR2_ERR_REQUEST_MALFORMED_JSON", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/workflows/flow/runs",
      headers: { authorization: `Bearer ${INSTANCE_TOKEN}`, "content-type": "application/json" },
      payload: '{"input": {',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "JR2_ERR_REQUEST_MALFORMED_JSON" });
  });

  it("an oversized body → 413 JR2_ERR_REQUEST_TOO_LARGE naming the limit", async () => {
    const small = await buildTestApp({ bodyLimit: 1024 });
    const { iid } = await startFlow(small);
    const res = await call(small, "POST", agentUrl(iid, "picks"), {
      name: "finish",
      arguments: { summary: "x".repeat(4096) },
      toolCallId: "big",
    });
    expectCoded(res, "JR2_ERR_REQUEST_TOO_LARGE");
    expect(res.body.limit).toBe(1024);
    await small.close();
  });

  it("a body failing the route's schema → 400 naming the field", async () => {
    const { iid } = await startFlow(app);
    const res = await call(app, "POST", agentUrl(iid, "picks"), { name: "finish", arguments: {} });
    expectCoded(res, "JR2_ERR_REQUEST_INVALID");
    expect(res.body.error).toContain("toolCallId");
  });

  it("unknown iids, runs and routes → coded 404s", async () => {
    expectCoded(await call(app, "GET", agentUrl("run-x/nobody/1", "surface")), "JR2_ERR_TURN_NOT_FOUND");
    expectCoded(await call(app, "GET", "/runs/run-nope"), "JR2_ERR_RUN_NOT_FOUND");
    expectCoded(await call(app, "GET", "/nowhere"), "JR2_ERR_ROUTE_NOT_FOUND");
  });

  it("a non-JSON content type → 415 naming it; a wrong token is refused before the body is read", async () => {
    const send = (token: string) =>
      app.inject({
        method: "POST",
        url: "/workflows/flow/runs",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/xml" },
        payload: "<hello/>",
      });
    const res = await send(INSTANCE_TOKEN);
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({
      code: "JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE",
      contentType: "application/xml",
    });
    expect((await send("wrong")).statusCode).toBe(401);
  });
});

describe("auth (§4.4)", () => {
  it("missing or wrong tokens → 401 before any lookup", async () => {
    const { iid } = await startFlow(app);
    expectCoded(await call(app, "GET", "/runs", undefined, null), "JR2_ERR_AUTH_MISSING");
    expectCoded(await call(app, "GET", "/runs", undefined, "wrong"), "JR2_ERR_AUTH_INVALID");
    expectCoded(await call(app, "GET", agentUrl(iid, "surface"), undefined, "wrong"), "JR2_ERR_AUTH_INVALID");
    expectCoded(
      await call(app, "GET", agentUrl("unknown", "surface"), undefined, null),
      "JR2_ERR_AUTH_MISSING",
    );
  });

  it("a sandbox token reaches no instance-scoped Turn (404, as if absent) and no run route (401)", async () => {
    const { iid } = await startFlow(app);
    const token = mintSandboxToken(SANDBOX_KEY, "ws-other");
    expectCoded(await call(app, "GET", agentUrl(iid, "surface"), undefined, token), "JR2_ERR_TURN_NOT_FOUND");
    const pickRes = await call(app, "POST", agentUrl(iid, "picks"), { name: "note", toolCallId: "s" }, token);
    expectCoded(pickRes, "JR2_ERR_TURN_NOT_FOUND");
    expectCoded(await call(app, "GET", "/runs", undefined, token), "JR2_ERR_AUTH_INVALID");
    expectCoded(
      await call(
        app,
        "GET",
        agentUrl(iid, "surface"),
        undefined,
        mintSandboxToken("another-key", "ws-other"),
      ),
      "JR2_ERR_AUTH_INVALID",
    );
  });

  it("/healthz and the workflow routes are open", async () => {
    const res = await call(app, "GET", "/healthz", undefined, null);
    expect(res).toEqual({ status: 200, body: { ok: true, version: expect.any(String), store: "ok" } });
  });
});
