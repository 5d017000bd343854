import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningUrl } from "./listening-url.js";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("./workflows", import.meta.url));
const TOKEN = "integration-token-9a8b7c6d5e4f3a2b";
const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

/**
 * The "Done when" over HTTP against the built binary: `jr2 serve --harness none` serving
 * a TypeScript workflow module; a person (this test) plays the Agent and the Gate.
 */
describe("jr2 serve --harness none: playing a Turn and a Gate by hand", () => {
  let child: ChildProcess;
  let url: string;

  beforeAll(async () => {
    if (!existsSync(`${packageDir}dist/cli/main.js`)) {
      execFileSync("pnpm", ["exec", "tsc", "-b", "packages/orchestrator"], { cwd: `${packageDir}../..` });
    }
    child = spawn(
      process.execPath,
      [
        `${packageDir}dist/cli/main.js`,
        "serve",
        "--harness",
        "none",
        "--port",
        "0",
        "--workflows",
        workflowsDir,
      ],
      {
        env: { ...process.env, JR2_INSTANCE_TOKEN: TOKEN, JR2_LOG_LEVEL: "warn" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    url = await listeningUrl(child);
  });
  afterAll(() => {
    child?.kill("SIGTERM");
  });

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("answers every pick class, then a Gate with 409 and 200", async () => {
    const { body: started } = await post("/workflows/flow/runs", { input: { task: "the report" } });
    const runId = started.runId as string;
    const iid = ((await get(`/runs/${runId}`)).body.turns as Array<{ iid: string }>)[0]!.iid;
    const picks = `/agents/${encodeURIComponent(iid)}/picks`;
    const pick = (name: string, args: unknown, id: string) =>
      post(picks, { name, arguments: args, toolCallId: id });

    expect((await get(`/agents/${encodeURIComponent(iid)}/surface`)).body.allowed).toEqual([
      "check",
      "escalate",
      "finish",
      "note",
    ]);
    expect((await pick("note", {}, "1")).body).toMatchObject({
      delivered: true,
      moved: true,
      turnComplete: false,
    });
    expect((await pick("escalate", { severity: "low" }, "2")).body).toMatchObject({
      delivered: true,
      moved: false,
    });
    expect((await pick("finish", {}, "3")).body).toMatchObject({ refusal: "invalid-arguments" });
    expect((await pick("run_tests", {}, "4")).body).toMatchObject({ refusal: "off-menu" });
    expect((await pick("fixed", {}, "5")).body).toMatchObject({ delivered: false, moved: false });
    expect((await pick("note", {}, "1")).body).toMatchObject({ delivered: true, moved: true }); // stored
    expect((await get(`/runs/${runId}`)).body.context).toMatchObject({ notes: 1 });
    expect((await pick("finish", { summary: "ok" }, "6")).body).toEqual({
      delivered: true,
      moved: true,
      turnComplete: true,
      allowed: [],
    });
    expect((await pick("note", {}, "7")).status).toBe(404);

    const gate = `/runs/${runId}/gates/review_gate/events`;
    const notNow = await post(gate, { type: "approve" });
    expect(notNow).toEqual({
      status: 409,
      body: expect.objectContaining({ code: "JR2_ERR_GATE_NOT_NOW", acceptsNow: ["reject"] }),
    });
    expect(await post(gate, { type: "reject", reason: "tests" })).toEqual({
      status: 200,
      body: { moved: true },
    });
    expect((await get(`/runs/${runId}`)).body.value).toBe("fixing");
  });

  it("never answers 5xx to malformed JSON, an unknown iid or a wrong token", async () => {
    const malformed = await fetch(`${url}/workflows/flow/runs`, { method: "POST", headers, body: "{" });
    expect(malformed.status).toBe(400);
    expect((await get("/agents/nobody%2Fhere/surface")).status).toBe(404);
    const wrong = await fetch(`${url}/runs`, { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});
