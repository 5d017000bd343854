/**
 * A workspace's network (issue 26, ADR-0171/0173): `workspace(body, { network })` reaches the
 * Harness on every Submission of a Turn inside it, as `network`; a bad host name is refused at
 * authoring with the form expected; the Harness's `warning` stream event (sandbox off, or
 * `network: "host"`) becomes a `warning` entry on the run's feed.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agent,
  createHarnessTurnDriver,
  createRunHost,
  defineEvent,
  jr2Setup,
  staticWorkspaceProvider,
  workspace,
} from "../src/index.js";
import { startFakeHarness } from "./fake-harness-server.js";
import { feedOf, quickTurns, until } from "./host-on-fake-harness.js";

const finish = defineEvent({ name: "finish", description: "Done.", input: z.object({}), audience: "agent" });

function workflow(network: readonly string[] | "host") {
  const body = jr2Setup({
    events: [finish],
    actors: { coder: agent({ model: "m", instructions: "code", workspace: "write" }) },
  }).createMachine({
    id: "body",
    initial: "working",
    states: {
      working: {
        invoke: { src: "coder", input: { prompt: "Install it." } },
        on: { finish: "done", "agent.fault": "done" },
      },
      done: { type: "final" },
    },
  });
  return jr2Setup({ events: [], actors: { code: workspace(body, { name: "code", network }) } }).createMachine(
    {
      id: "net",
      initial: "running",
      states: { running: { invoke: { src: "code", onDone: "done" } }, done: { type: "final" } },
    },
  );
}

async function runOn(network: readonly string[] | "host") {
  const fake = await startFakeHarness({
    script: () => ({
      kind: "events",
      events: [
        { type: "warning", message: 'network: "host": every loopback service is reachable' },
        { type: "submission-settled", outcome: "failed", error: { type: "test", message: "stop here" } },
      ],
    }),
  });
  const host = createRunHost({
    workflows: new Map([["w", workflow(network)]]),
    placement: {
      provider: staticWorkspaceProvider(fake.url, "sb"),
      workRoot: "/work",
      allowExplicitEndpoints: false,
    },
    turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
  });
  const { runId } = await host.startRun("w", {});
  await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
  return { fake, host, runId };
}

describe("workspace(body, { network })", () => {
  it("sends the allow list on the Turn's Submission, with the workspace's cwd", async () => {
    const { fake, host, runId } = await runOn(["registry.npmjs.org", "*.pythonhosted.org"]);
    expect(fake.admissions[0]?.body).toMatchObject({
      cwd: `/work/${runId}/code`,
      network: ["registry.npmjs.org", "*.pythonhosted.org"],
    });
    await host.close();
    await fake.close();
  });

  it('sends "host", and the Harness\'s warning is a feed entry of the Turn', async () => {
    const { fake, host, runId } = await runOn("host");
    expect(fake.admissions[0]?.body.network).toBe("host");
    const warnings = await feedOf(host, runId, "warning");
    expect(warnings.map((w) => w.message)).toEqual(['network: "host": every loopback service is reachable']);
    expect(warnings[0]?.child).toContain("coder");
    await host.close();
    await fake.close();
  });

  it("refuses a host that is not a host name, naming it and the form expected", () => {
    expect(() => workflow(["https://registry.npmjs.org/"])).toThrow(
      'workspace network entry "https://registry.npmjs.org/" is not a host name (e.g. "registry.npmjs.org" or "*.example.com")',
    );
  });
});
