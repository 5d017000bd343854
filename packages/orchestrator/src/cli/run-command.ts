import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import type { Gate, RunDetail, StartRunAnswer } from "@jr2/wire";
import { cachePercent } from "../durability/usage-totals.js";
import { CliHttpError, type CliTarget, call, followFeed, resolveTarget } from "./client.js";
import { formatFeedEvent } from "./feed-printer.js";

export const runUsage =
  "jr2 run <workflow> [--input JSON] [--follow] [--answer-gates EVENT[,EVENT]] [--url URL] [--token T]";
export const gateUsage = "jr2 gate <runId> <gateId> <event> [--payload JSON] [--url URL] [--token T]";

function parseJson(flag: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${flag} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * `jr2 run`: starts a run and, with `--follow`, prints its feed live until it settles. When a
 * Gate opens it shows `acceptsNow` and how to answer; `--answer-gates` answers it with the
 * first listed event it accepts now, and in a terminal it asks.
 * @returns exit code: 0 when the run settles `done`, 1 otherwise
 */
export async function runCommand(args: string[], out = process.stdout): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      input: { type: "string" },
      follow: { type: "boolean", default: false },
      "answer-gates": { type: "string" },
      url: { type: "string" },
      token: { type: "string" },
    },
  });
  const workflow = positionals[0];
  if (!workflow) throw new Error(`missing <workflow>\nusage: ${runUsage}`);
  const target = resolveTarget(values, process.env);
  const input = parseJson("--input", values.input);
  const { runId } = await call<StartRunAnswer>(
    target,
    "POST",
    `/workflows/${encodeURIComponent(workflow)}/runs`,
    {
      ...(input === undefined ? {} : { input }),
    },
  );
  out.write(`run ${runId} started (workflow ${workflow})\n`);
  if (!values.follow) {
    out.write(`follow it: jr2 follow ${runId}\n`);
    return 0;
  }
  return followRun(target, runId, values["answer-gates"]?.split(",").filter(Boolean) ?? [], out);
}

/**
 * Prints a run's feed live until it settles, answering Gates as `jr2 run` does.
 * @returns exit code: 0 when the run settles `done`, 1 otherwise
 */
export async function followRun(
  target: CliTarget,
  runId: string,
  autoAnswers: string[],
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  for await (const event of followFeed(target, runId)) {
    out.write(`${formatFeedEvent(event, runId)}\n`);
    if (event.type === "gate") await answerGate(target, runId, event.gate, autoAnswers, out);
  }
  const detail = await call<RunDetail>(target, "GET", `/runs/${encodeURIComponent(runId)}`);
  const u = detail.usage;
  const pct = cachePercent(u);
  out.write(
    `run ${runId} ${detail.status}${detail.fault ? ` (${detail.fault.reason}${detail.fault.cause ? `, cause ${detail.fault.cause}` : ""})` : ""}; tokens: prompt ${u.promptTokens ?? "?"}, cached ${u.cachedTokens ?? "?"} (${pct === null ? "?" : `${pct}%`}), completion ${u.completionTokens ?? "?"}\n`,
  );
  return detail.status === "done" ? 0 : 1;
}

async function answerGate(
  target: CliTarget,
  runId: string,
  gate: Gate,
  auto: string[],
  out: NodeJS.WritableStream,
) {
  const chosen = auto.find((name) => gate.acceptsNow.includes(name));
  if (chosen) {
    await sendGateEvent(target, runId, gate.id, { type: chosen }, out);
    return;
  }
  if (!process.stdin.isTTY || auto.length > 0) {
    // Nothing will answer here: say so once per Gate, and how to answer it from elsewhere.
    const why =
      auto.length > 0
        ? `--answer-gates ${auto.join(",")} has none of the events it accepts now (${gate.acceptsNow.join(", ") || "none yet"})`
        : "no terminal to ask at (pass --answer-gates <event> to answer it from a script)";
    out.write(
      `          gate      ${gate.id} waits: ${why}; answer it with: jr2 gate ${runId} ${gate.id} <event>\n`,
    );
    return;
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = (
      await rl.question(`answer ${gate.id} with <event> [payload JSON] (empty: leave it open): `)
    ).trim();
    if (!answer) return;
    const [type, ...rest] = answer.split(" ");
    const payload = rest.length ? (parseJson("payload", rest.join(" ")) as object) : {};
    await sendGateEvent(target, runId, gate.id, { ...payload, type }, out);
  } finally {
    rl.close();
  }
}

async function sendGateEvent(
  target: CliTarget,
  runId: string,
  gateId: string,
  body: { type?: string },
  out: NodeJS.WritableStream,
): Promise<void> {
  try {
    await call(
      target,
      "POST",
      `/runs/${encodeURIComponent(runId)}/gates/${encodeURIComponent(gateId)}/events`,
      body,
    );
    out.write(`          gate      ${gateId} ← ${body.type} (moved)\n`);
  } catch (error) {
    if (!(error instanceof CliHttpError)) throw error;
    const now = (error.body?.acceptsNow as string[] | undefined)?.join(", ");
    out.write(
      `          gate      ${gateId} refused ${body.type}: ${error.message}${now !== undefined ? `; accepts now: ${now || "none"}` : ""}\n`,
    );
  }
}

/** `jr2 gate <runId> <gateId> <event> [--payload JSON]`: answers a Gate (§6). */
export async function gateCommand(args: string[], out = process.stdout): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { payload: { type: "string" }, url: { type: "string" }, token: { type: "string" } },
  });
  const [runId, gateId, type] = positionals;
  if (!runId || !gateId || !type) throw new Error(`missing arguments\nusage: ${gateUsage}`);
  const payload = parseJson("--payload", values.payload) ?? {};
  if (typeof payload !== "object" || Array.isArray(payload) || payload === null) {
    throw new Error("--payload must be a JSON object");
  }
  const target = resolveTarget(values, process.env);
  try {
    await call(
      target,
      "POST",
      `/runs/${encodeURIComponent(runId)}/gates/${encodeURIComponent(gateId)}/events`,
      {
        ...payload,
        type,
      },
    );
  } catch (error) {
    if (error instanceof CliHttpError && error.status === 409) {
      const now = (error.body?.acceptsNow as string[] | undefined) ?? [];
      out.write(`not now: ${error.message}\naccepts now: ${now.join(", ") || "none"}\n`);
      return 1;
    }
    throw error;
  }
  out.write(`${gateId} ← ${type}: moved\n`);
  return 0;
}
