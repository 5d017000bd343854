/**
 * Regression (issue 11 "Secrets").
 * Root cause: pi's bash Working tool spawned with the Harness's whole environment (pi's
 * `getShellEnv()` is `process.env`), so one `env` put the bearer (`JR2_HARNESS_TOKEN`), the
 * sandbox token and `JR2_MODELS` with its API keys into the tool result — and from there into
 * the next model request, the stream the Orchestrator records, and the logs. Nothing between a
 * tool's output and the model looked for the Harness's own secrets either (a `cat` of the
 * model table file showed its keys).
 * Fixed: working-environment.ts (bash starts through pi's `spawnHook` with no `JR2_*`, no
 * secret-named variable, no variable holding a secret), secret-redaction.ts (every occurrence
 * of the Harness's secret values in a Working tool's result, partial result, details or error
 * becomes `[redacted]`), applied to every Working tool in working-tools.ts (ADR-0158).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { Type } from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRedactor, MIN_SECRET_LENGTH, REDACTED } from "../../src/tools/secret-redaction.js";
import { harnessSecretValues, isSecretName, scrubEnvironment } from "../../src/tools/working-environment.js";
import { redactedTool } from "../../src/tools/working-tools.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { TOKEN } from "../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../fixtures/scripted-upstream.js";
import { messagesOf, upstreamHarness } from "../fixtures/upstream-harness.js";

const API_KEY = "sk-issue11-model-key-0123456789abcdef";
/** The fixture Harness's sandbox token (upstreamHarness passes it). */
const SANDBOX_TOKEN = "sandbox.token";
const INHERITED_TOKEN = "ghp_issue11_inherited_0123456789";
/** Not secret, but the Harness's configuration: it must not reach a tool at all. */
const PLAIN_JR2 = "plain-jr2-value-not-for-tools";

/** What the Harness process holds in its environment (as `jr2-harness` would be started). */
const HARNESS_ENV: Record<string, string> = {
  JR2_HARNESS_TOKEN: TOKEN,
  JR2_SANDBOX_TOKEN: SANDBOX_TOKEN,
  JR2_MODELS: JSON.stringify({ sim: { baseUrl: "http://127.0.0.1:9/v1", apiKey: API_KEY } }),
  JR2_PLAIN_SETTING: PLAIN_JR2,
  OPENAI_API_KEY: API_KEY,
  GITHUB_TOKEN: INHERITED_TOKEN,
  MY_TOOL_CONFIG: `endpoint=local;key=${API_KEY}`,
  KEEP_ME: "visible-value-for-tools",
};

/** Every value no model request, stream event or log line may carry. */
const SECRETS = [TOKEN, SANDBOX_TOKEN, API_KEY, INHERITED_TOKEN, PLAIN_JR2, "endpoint=local;key="];

describe("a Working-tool call `env; cat /proc/self/environ` (issue 11 Done-when)", () => {
  let upstream: ScriptedUpstream;
  let orch: FakeOrchestrator;
  beforeEach(async () => {
    upstream = await startScriptedUpstream();
    orch = await startFakeOrchestrator();
    Object.assign(process.env, HARNESS_ENV);
  });
  afterEach(async () => {
    for (const name of Object.keys(HARNESS_ENV)) delete process.env[name];
    await upstream.close();
    await orch.close();
  });

  it("leaves no secret in the next model request, the stream, the picks or the Harness's log; bash still works", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "jr2-issue11-"));
    // A model table file in reach of bash (JR2_MODELS=@file): its key is redacted, not hidden.
    writeFileSync(join(cwd, "models.json"), HARNESS_ENV.JR2_MODELS!);
    const h = upstreamHarness(upstream, orch, { apiKey: API_KEY });
    const command = "env; cat /proc/self/environ; echo; cat models.json";
    upstream.script([
      { sse: answer({ toolCalls: [{ name: "bash", arguments: JSON.stringify({ command }) }] }) },
      // A model that repeats a key it read elsewhere: the transcript shows it redacted too.
      { sse: answer({ content: `I have looked around; the key is ${API_KEY}.` }) },
    ]);
    const iid = "r1/coder/secrets";
    const { settlement } = await h.run(iid, {
      turnId: "t-11",
      definition: { model: "sim", instructions: "i", workspace: "write" },
      cwd,
    });
    expect(settlement.outcome).toBe("completed");
    expect(upstream.bodies).toHaveLength(2);

    const result = String(messagesOf(upstream.bodies[1]!).find((m) => m.role === "tool")?.content);
    // bash ran with a working environment: PATH, HOME and the user's own variables are there…
    expect(result).toMatch(/^PATH=/m);
    expect(result).toContain("HOME=");
    expect(result).toContain("KEEP_ME=visible-value-for-tools");
    // …and none of the Harness's: no JR2_* name, no secret-named variable, no value holding a key.
    expect(result).not.toContain("JR2_");
    expect(result).not.toMatch(/OPENAI_API_KEY|GITHUB_TOKEN|MY_TOOL_CONFIG/);
    // The file's key reached the model as [redacted].
    expect(result).toContain(`"apiKey":"${REDACTED}"`);

    // The transcript (ADR-0159) holds the tool result as the model read it: redacted.
    const transcript = (await h.events(iid)).flatMap((e) => (e.type === "transcript" ? [e.entry] : []));
    const toolResult = transcript.find((e) => e.kind === "message" && e.part === "tool-result");
    expect(toolResult && toolResult.kind === "message" && toolResult.text).toContain(
      `"apiKey":"${REDACTED}"`,
    );
    expect(transcript.filter((e) => e.kind === "answer").at(-1)).toMatchObject({
      text: `I have looked around; the key is ${REDACTED}.`,
    });
    expect(transcript.find((e) => e.kind === "answer")).toMatchObject({
      toolCalls: [{ name: "bash", rawArguments: JSON.stringify({ command }), disposition: "working" }],
    });

    const seen = {
      "the next model request": upstream.bodies[1]!,
      "the transcript": JSON.stringify(transcript),
      "the stream the Orchestrator records": JSON.stringify(await h.events(iid)),
      "the picks": JSON.stringify(orch.picks),
      "the Harness's log": JSON.stringify(h.lines),
    };
    for (const [where, text] of Object.entries(seen)) {
      for (const secret of SECRETS) expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
    }
    await h.app.close();
  });
});

describe("the redactor (secret-redaction.ts)", () => {
  it("replaces every occurrence of every secret", () => {
    const r = createRedactor(["alpha-secret-1", "beta-secret-22"]);
    expect(r.redact("a=alpha-secret-1 b=beta-secret-22 again alpha-secret-1.")).toBe(
      `a=${REDACTED} b=${REDACTED} again ${REDACTED}.`,
    );
    expect(r.redact("nothing here")).toBe("nothing here");
  });

  it("leaves no fragment of overlapping secrets: one inside another, or two sharing characters", () => {
    const mac = "0123456789abcdef0123456789abcdef";
    // The sandbox token and its MAC alone are both secrets; the longer one wins where both match.
    const r = createRedactor([mac, `instance.${mac}`, "AAAABBBB", "BBBBCCCC"]);
    expect(r.redact(`tok=instance.${mac} mac=${mac}`)).toBe(`tok=${REDACTED} mac=${REDACTED}`);
    expect(r.redact("xAAAABBBBCCCCx")).toBe(`x${REDACTED}x`);
  });

  it(`ignores values shorter than ${MIN_SECRET_LENGTH} characters (EMPTY, none)`, () => {
    const r = createRedactor(["EMPTY", "none", "1234567", ""]);
    expect(r.size).toBe(0);
    expect(r.redact("apiKey EMPTY none 1234567")).toBe("apiKey EMPTY none 1234567");
    expect(createRedactor(["12345678"]).redact("x12345678")).toBe(`x${REDACTED}`);
  });

  it("finds a key as it is written inside JSON and in a URL", () => {
    const key = 'sk-"quoted"\\slash/key';
    const r = createRedactor([key]);
    expect(r.redact(JSON.stringify({ apiKey: key }))).toBe(`{"apiKey":"${REDACTED}"}`);
    expect(r.redact(`?key=${encodeURIComponent(key)}`)).toBe(`?key=${REDACTED}`);
  });

  it("redacts strings at any depth of a details value and says whether a text holds a secret", () => {
    const r = createRedactor(["deep-secret-value"]);
    expect(r.redactValue({ a: ["x deep-secret-value"], b: { c: 3, d: "deep-secret-value" } })).toEqual({
      a: [`x ${REDACTED}`],
      b: { c: 3, d: REDACTED },
    });
    expect(r.holds("…deep-secret-value…")).toBe(true);
    expect(r.holds("deep-secret")).toBe(false);
  });
});

describe("the Working tools' environment (working-environment.ts)", () => {
  const secrets = createRedactor([API_KEY]);

  it("drops JR2_*, secret-named variables and values holding a secret; keeps what bash needs", () => {
    const env = scrubEnvironment(
      {
        PATH: "/usr/bin:/bin",
        HOME: "/home/u",
        LANG: "C.UTF-8",
        TERM: "xterm",
        TOKENIZERS_PARALLELISM: "false",
        JR2_HARNESS_TOKEN: TOKEN,
        JR2_LOG_LEVEL: "info",
        jr2_lower: "x",
        OPENAI_API_KEY: "sk-other",
        HF_TOKEN: "hf_x",
        AWS_SECRET_ACCESS_KEY: "a",
        npm_config__authToken: "t",
        DB_PASSWORD: "p",
        OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer x",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "Authorization=Bearer y",
        MY_TOOL_CONFIG: `key=${API_KEY}`,
      },
      secrets,
    );
    expect(env).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/u",
      LANG: "C.UTF-8",
      TERM: "xterm",
      TOKENIZERS_PARALLELISM: "false",
    });
  });

  it("drops what the sandbox's adversary found passing (issue 26): keys, PATs, auth, DSNs, URLs with a password", () => {
    const leaked = {
      OPENAI_KEY: "k",
      SIGNING_KEY: "k",
      GITHUB_PAT: "p",
      NPM_AUTH: "a",
      SSH_AUTH_SOCK: "/tmp/ssh-agent.sock",
      DOCKER_AUTH_CONFIG: "{}",
      SENTRY_DSN: "https://k@o.ingest/1",
      PGPASS: "x",
      MYSQL_PWD: "x",
      COOKIE: "sid=1",
      KUBECONFIG: "/root/.kube/config",
      DATABASE_URL: "postgres://u:hunter2@db/app",
      REDIS_URL: "redis://:pw@cache:6379",
    };
    const kept = {
      PWD: "/work/run",
      OLDPWD: "/",
      GIT_AUTHOR_NAME: "jr2",
      PUBLIC_URL: "https://example.org/app",
    };
    expect(scrubEnvironment({ ...leaked, ...kept }, secrets)).toEqual(kept);
  });

  it("names secrets by their suffix or word, not by a substring", () => {
    expect(
      ["GITHUB_TOKEN", "OPENAI_API_KEY", "MY_APIKEY", "CLIENT_SECRET", "GOOGLE_CREDENTIALS"].every(
        isSecretName,
      ),
    ).toBe(true);
    expect(["TOKENIZERS_PARALLELISM", "SECRETARY", "PATH", "KEYBOARD"].some(isSecretName)).toBe(false);
  });

  it("collects the bearer, the sandbox token and its MAC, every apiKey and inherited secret-named values", () => {
    const mac = "f".repeat(64);
    const values = harnessSecretValues({
      harnessToken: TOKEN,
      sandboxToken: `instance.${mac}`,
      models: {
        a: { baseUrl: "http://h/v1", id: "a", contextWindow: 1, maxTokens: 1, apiKey: API_KEY },
        b: { baseUrl: "http://h/v1", id: "b", contextWindow: 1, maxTokens: 1 },
      },
      environment: { GITHUB_TOKEN: INHERITED_TOKEN, PATH: "/bin" },
    });
    expect(values).toEqual([TOKEN, `instance.${mac}`, mac, API_KEY, INHERITED_TOKEN]);
  });
});

describe("a redacted Working tool (working-tools.ts)", () => {
  const secrets = createRedactor([API_KEY]);
  const tool = (execute: AgentTool["execute"]): AgentTool =>
    redactedTool({ name: "t", label: "t", description: "d", parameters: Type.Object({}), execute }, secrets);

  it("redacts the result's text, partial results and details; images pass", async () => {
    const partials: unknown[] = [];
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    const result = await tool(async (_id, _p, _s, onUpdate) => {
      onUpdate?.({ content: [{ type: "text", text: `partial ${API_KEY}` }], details: undefined });
      return { content: [{ type: "text", text: `key ${API_KEY}` }, image], details: { path: API_KEY } };
    }).execute("c1", {}, undefined, (p) => partials.push(p));
    expect(result.content).toEqual([{ type: "text", text: `key ${REDACTED}` }, image]);
    expect(result.details).toEqual({ path: REDACTED });
    expect(JSON.stringify(partials)).not.toContain(API_KEY);
  });

  it("redacts the message of what it throws (bash's non-zero exit carries the output)", async () => {
    const failing = tool(async () => {
      throw new Error(`${API_KEY}\n\nCommand exited with code 1`);
    });
    await expect(failing.execute("c1", {})).rejects.toThrow(`${REDACTED}\n\nCommand exited with code 1`);
  });
});
