import type { FastifyInstance, InjectOptions } from "fastify";
import { assign, fromPromise } from "xstate";
import { z } from "zod";
import { agent, buildOrchestrator, defineEvent, jr2Setup } from "../../src/index.js";

export const INSTANCE_TOKEN = "test-instance-token-0123456789abcdef";
export const SANDBOX_KEY = "test-sandbox-key-0123456789abcdef";

const finish = defineEvent({
  name: "finish",
  description: "Finish the work with a summary.",
  input: z.object({ summary: z.string().min(1) }),
  audience: "agent",
});
const note = defineEvent({ name: "note", description: "Record a note; the work goes on." });
const escalate = defineEvent({
  name: "escalate",
  description: "Escalate the task.",
  input: z.object({ severity: z.enum(["low", "high"]) }),
});
const check = defineEvent({ name: "check", description: "Start a background check.", audience: "agent" });
const fixed = defineEvent({ name: "fixed", description: "Say the fix is done.", audience: "agent" });
const approve = defineEvent({ name: "approve", description: "Approve the work.", audience: "gate" });
const reject = defineEvent({
  name: "reject",
  description: "Send the work back.",
  input: z.object({ reason: z.string().min(1) }),
  audience: "gate",
});

/**
 * A small workflow covering every pick answer class and a Gate:
 * `working` (the worker: finish → review, note in-state, escalate guarded on the payload, check
 * enters a mode whose child never settles → busy), `review` (a Gate: approve only without notes,
 * reject → fixing), `fixing` (the same worker picks `fixed`).
 */
export const flow = jr2Setup({
  events: [finish, note, escalate, check, fixed, approve, reject],
  actors: {
    worker: agent({ model: "m", instructions: "You work on tasks." }),
    background: fromPromise(() => new Promise<never>(() => {})),
  },
  guards: {
    isHigh: ({ event }: { event: { severity?: string } }) => event.severity === "high",
    noNotes: ({ context }: { context: { notes: number } }) => context.notes === 0,
  },
  input: z.object({ task: z.string().min(1) }),
}).createMachine({
  id: "flow",
  context: ({ input }: { input: { task: string } }) => ({ task: input.task, notes: 0 }),
  initial: "working",
  states: {
    working: {
      invoke: {
        src: "worker",
        input: ({ context }: { context: { task: string } }) => ({ prompt: `Do ${context.task}.` }),
      },
      initial: "idle",
      states: {
        idle: { on: { check: "checking" } },
        checking: { invoke: { src: "background" } },
      },
      on: {
        note: {
          actions: assign({ notes: ({ context }: { context: { notes: number } }) => context.notes + 1 }),
        },
        escalate: { guard: "isHigh", target: "escalated" },
        finish: "review",
        "agent.fault": "failed",
      },
    },
    review: {
      invoke: { src: "gate", id: "review_gate", input: { meta: { question: "Is the work good?" } } },
      on: { approve: { guard: "noNotes", target: "done" }, reject: "fixing" },
    },
    fixing: {
      invoke: { src: "worker", input: { prompt: "Fix it." } },
      on: { fixed: "review", "agent.fault": "failed" },
    },
    escalated: { type: "final" },
    done: { type: "final" },
    failed: { type: "final" },
  },
});

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
