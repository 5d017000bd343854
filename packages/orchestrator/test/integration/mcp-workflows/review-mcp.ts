/**
 * `review` with a reviewer that uses MCP tools (issue 29): `sample` is the npm package
 * `@modelcontextprotocol/server-everything` over stdio (one process per conversation, in the
 * run's sandbox), `docs` a Streamable HTTP server of the test's own on 127.0.0.1 whose URL the
 * test hands the Orchestrator as JR2_TEST_MCP_URL, its bearer named, never written.
 */
import { fileURLToPath } from "node:url";
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
import { z } from "zod";

const everything = fileURLToPath(
  new URL(
    "../../../../harness/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    import.meta.url,
  ),
);
const finish = defineEvent({
  name: "finish",
  description: "Say the code is ready for review.",
  input: z.object({ summary: z.string().min(1) }),
  audience: "agent",
});
const approve = defineEvent({
  name: "approve",
  description: "Approve the change.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});
const request_changes = defineEvent({
  name: "request_changes",
  description: "Ask for changes.",
  input: z.object({ comments: z.array(z.string()) }),
  audience: "agent",
});

export const machine = jr2Setup({
  events: [finish, approve, request_changes],
  actors: {
    coder: agent({ model: "coder", instructions: "You implement changes.", workspace: "none" }),
    reviewer: agent({
      model: "reviewer",
      instructions: "You review the change, looking terms up in the docs.",
      // No Worktree here (a workspace() wrap is not what this test is about): the stdio server
      // still runs in the run's sandbox, with an empty root.
      workspace: "none",
      mcp: {
        docs: {
          url: process.env.JR2_TEST_MCP_URL ?? "http://127.0.0.1:9/mcp",
          headers: { Authorization: { secret: "DOCS_MCP_TOKEN" } },
        },
        sample: { command: process.execPath, args: [everything, "stdio"] },
      },
    }),
  },
}).createMachine({
  id: "review-mcp",
  initial: "implement",
  states: {
    implement: {
      invoke: { src: "coder", input: { prompt: "Implement hello() in hello.js." } },
      on: { finish: "review", "agent.fault": "failed" },
    },
    review: {
      invoke: { src: "reviewer", input: { prompt: "Review the change in the working directory." } },
      on: { approve: "done", request_changes: "done", "agent.fault": "failed" },
    },
    done: { type: "final" },
    failed: { type: "final" },
  },
});
