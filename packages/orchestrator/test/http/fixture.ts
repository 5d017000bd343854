import { errorCodes } from "@jr2/wire";
import type { FastifyInstance, InjectOptions } from "fastify";
import { expect } from "vitest";
import { buildOrchestrator } from "../../src/index.js";
import { machine as flow } from "../integration/workflows/flow.js";

export const INSTANCE_TOKEN = "test-instance-token-0123456789abcdef";
export const SANDBOX_KEY = "test-sandbox-key-0123456789abcdef";
/** `JR2_PEER_KEY` of the instances of the forwarding tests (ADR-0281). */
export const PEER_KEY = "test-peer-key-0123456789abcdef";

/**
 * A small workflow covering every pick answer class and a Gate (see its module): the same file
 * the built `jr2 serve` binary loads in the integration tests.
 */
export { flow };

/** An app serving `flow`, with the test tokens. */
export async function buildTestApp(options: { bodyLimit?: number } = {}): Promise<FastifyInstance> {
  return buildOrchestrator({
    workflows: new Map([["flow", flow]]),
    auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
    ...options,
  });
}

/** `app.inject` with the instance token (or `token`), JSON parsed. */
export async function call(
  app: FastifyInstance,
  method: InjectOptions["method"],
  url: string,
  body?: unknown,
  token: string | null = INSTANCE_TOKEN,
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
): Promise<{ status: number; body: any }> {
  const res = await app.inject({
    method,
    url,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { payload: body as InjectOptions["payload"] }),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
}

/** Starts a run of `flow` and returns its id and its live Turn's iid. */
export async function startFlow(app: FastifyInstance): Promise<{ runId: string; iid: string }> {
  const started = await call(app, "POST", "/workflows/flow/runs", { input: { task: "the report" } });
  const runId = started.body.runId as string;
  const run = await call(app, "GET", `/runs/${runId}`);
  return { runId, iid: run.body.turns[0].iid as string };
}

/** The agent route of an iid: one percent-encoded segment. */
export const agentUrl = (iid: string, what: "surface" | "picks") =>
  `/agents/${encodeURIComponent(iid)}/${what}`;

/** Every error body is `{ error, code, ... }` with a code of the wire table and its status. */
// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
export function expectCoded(res: { status: number; body: any }, code: keyof typeof errorCodes) {
  expect(res.body).toMatchObject({ code, error: expect.any(String) });
  expect(res.status).toBe(errorCodes[code].status);
}
