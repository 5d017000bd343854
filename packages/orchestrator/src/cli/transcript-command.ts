/**
 * `jr2 transcript <runId> [--turn <turnId> | --agent <name>] [--json]` (issue 11 item 4,
 * ADR-0257): the run's Turns as their models saw them — every Turn in start order, one Turn,
 * or one Agent's. Reads `GET /runs/:runId/turns` and `GET /runs/:runId/turns/:turnId`.
 * `--json` prints the TurnTranscript answers raw (one JSON array).
 * @see SPEC §4.1
 */
import { parseArgs } from "node:util";
import type { TurnList, TurnTranscript } from "@jr2/wire";
import { call, resolveTarget } from "./client.js";
import { JR2 } from "./invocation.js";
import { formatTranscript } from "./transcript-text.js";

export const transcriptUsage = `${JR2} transcript <runId> [--turn <turnId> | --agent <name>] [--json] [--url URL] [--token T]`;

/** `jr2 transcript`. @returns 0 (1 when no Turn matched), or throws (main prints it) */
export async function transcriptCommand(
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      turn: { type: "string" },
      agent: { type: "string" },
      json: { type: "boolean", default: false },
      url: { type: "string" },
      token: { type: "string" },
    },
  });
  const runId = positionals[0];
  if (!runId) throw new Error(`missing <runId>; list runs with \`${JR2} runs\`\nusage: ${transcriptUsage}`);
  if (values.turn && values.agent)
    throw new Error(`give --turn or --agent, not both\nusage: ${transcriptUsage}`);
  const target = resolveTarget(values, process.env);
  const run = `/runs/${encodeURIComponent(runId)}`;
  let ids: string[];
  if (values.turn) ids = [values.turn];
  else {
    const list = await call<TurnList>(target, "GET", `${run}/turns`);
    const turns = values.agent ? list.turns.filter((t) => t.agent === values.agent) : list.turns;
    if (turns.length === 0) {
      const agents = [...new Set(list.turns.map((t) => t.agent))].join(", ") || "none";
      process.stderr.write(
        values.agent
          ? `run ${runId} has no Turn of Agent \`${values.agent}\`; its Agents: ${agents}\n`
          : `run ${runId} has no Turns recorded\n`,
      );
      return 1;
    }
    ids = turns.map((t) => t.turnId);
  }
  const transcripts: TurnTranscript[] = [];
  let shown: TurnTranscript["prefix"] = null;
  for (const id of ids) {
    const t = await call<TurnTranscript>(target, "GET", `${run}/turns/${encodeURIComponent(id)}`);
    if (values.json) {
      transcripts.push(t);
      continue;
    }
    out.write(`${transcripts.length > 0 || shown ? "\n" : ""}${formatTranscript(t, shown ?? undefined)}`);
    shown = t.prefix ?? shown;
    transcripts.push(t);
  }
  if (values.json) out.write(`${JSON.stringify(values.turn ? transcripts[0] : transcripts, null, 2)}\n`);
  return 0;
}
