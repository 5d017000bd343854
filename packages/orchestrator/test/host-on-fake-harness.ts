/**
 * A run host whose Turns run on a {@link startFakeHarness} fake through the shipped Harness
 * Turn driver and client (real HTTP on 127.0.0.1), with short backoffs so a test does not wait.
 */
import type { RunFeedEvent } from "@jr2/wire";
import { expect } from "vitest";
import {
  agent,
  createHarnessTurnDriver,
  createRunHost,
  defineEvent,
  INSTANCE_CALLER,
  type Jr2Machine,
  jr2Setup,
  type RunStore,
} from "../src/index.js";
import type { TurnConfig } from "../src/turns/agent-actor.js";
import type { FakeHarness } from "./fake-harness-server.js";

/** Short waits: the fake answers at once; a poll waits at most a second. */
export const quickTurns: Partial<TurnConfig> = {
  pollWaitSeconds: 1,
  backoffMinMs: 5,
  backoffMaxMs: 20,
};

/**
 * The one-Agent workflow of the tests that drive one Turn (admission regressions, run ownership,
 * the Harness's retries on the feed): `coder` (model `m`) works until it picks `finish` (→ `done`)
 * or faults (→ `failed`). `id` names the Machine.
 */
export function oneCoderMachine(id: string) {
  const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
  return jr2Setup({
    events: [finish],
    actors: { coder: agent({ model: "m", instructions: "You code.", workspace: "none" }) },
  }).createMachine({
    id,
    initial: "work",
    states: {
      work: {
        invoke: { src: "coder", input: { prompt: "Do the work." } },
        on: { finish: "done", "agent.fault": "failed" },
      },
      done: { type: "final" },
      failed: { type: "final" },
    },
  });
}

/** A host with one workflow `w` placed on `fake`, or any Harness at a URL (every Agent `workspace: "none"`). */
export function hostOn(
  fake: Pick<FakeHarness, "url">,
  machine: Jr2Machine,
  config: Partial<TurnConfig> = {},
  store?: RunStore,
) {
  return createRunHost({
    workflows: new Map([["w", machine]]),
    ...(store ? { store } : {}),
    placement: { instanceHarnessUrl: fake.url, workRoot: "/work", allowExplicitEndpoints: false },
    turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: { ...quickTurns, ...config } }),
  });
}

/** Polls (5 ms ticks, bounded) until `check` holds; fails naming `what` otherwise. */
export async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2_000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  expect(await check(), `never reached: ${what}`).toBe(true);
}

/** The feed events of `runId` of one type. */
export async function feedOf<T extends RunFeedEvent["type"]>(
  host: ReturnType<typeof createRunHost>,
  runId: string,
  type: T,
): Promise<Array<Extract<RunFeedEvent, { type: T }>>> {
  return (await host.feedOf(runId))
    .since()
    .filter((e): e is Extract<RunFeedEvent, { type: T }> => e.type === type);
}

/** Picks `finish` (toolCallId `c1`) as the instance on the run's first Turn: that Turn's `iid` and the pick's answer. */
export async function pickFinishOnFirstTurn(host: ReturnType<typeof createRunHost>, runId: string) {
  const { iid } = (await host.getRun(runId)).turns[0]!;
  const answer = await host.deliverPick(iid, INSTANCE_CALLER, {
    name: "finish",
    arguments: {},
    toolCallId: "c1",
  });
  return { iid, answer };
}
