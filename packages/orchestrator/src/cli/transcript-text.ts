/**
 * A Turn transcript for a terminal (`jr2 transcript`, ADR-0257): the Turn's header, its
 * conversation's system prompt and tools once, then each entry in order — a message labelled
 * by its part, an answer with its reasoning, text, tool calls and their arguments, its usage
 * and finish reason. Every text is stripped of control characters (ANSI/OSC escapes a model
 * may write) except newline and tab; `--json` prints the answer raw instead.
 * @see issue 11 item 4
 */
import type { TranscriptRecord, TurnTranscript } from "@jr2/wire";

/** C0 controls except tab and newline, DEL, and C1 controls (U+0080–U+009F). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` without C0/C1 control characters except `\n` and `\t` (an ESC of an escape sequence goes with them). */
export function stripControls(text: string): string {
  return text.replace(CONTROL, "");
}

/** A server-given name on one line: controls stripped, a newline shown as `\n` (issue 29). */
function oneLine(text: string): string {
  return stripControls(text).replace(/\r?\n/g, "\\n");
}

/** The tools block's names, or its text when it is not a JSON array of function tools. */
function toolNames(toolsJson: string): string {
  try {
    const tools = JSON.parse(toolsJson) as Array<{ function?: { name?: string }; name?: string }>;
    return tools.map((t) => t.function?.name ?? t.name ?? "?").join(", ") || "(none)";
  } catch {
    return toolsJson;
  }
}

/** The tool calls of a replayed assistant message's JSON, one line each (none when it has none). */
function replayedCalls(json: string): string[] {
  try {
    const m = JSON.parse(json) as {
      tool_calls?: Array<{ function?: { name?: string; arguments?: string } }>;
    };
    return (m.tool_calls ?? []).map((c) =>
      stripControls(`    → ${c.function?.name ?? "?"} ${c.function?.arguments ?? ""}`),
    );
  } catch {
    return [];
  }
}

/** `text` indented under a label. */
function block(text: string, indent = "    "): string[] {
  return stripControls(text)
    .split("\n")
    .map((l) => `${indent}${l}`);
}

/** The lines of one entry. */
function entryLines(record: TranscriptRecord): string[] {
  const { entry } = record;
  const capped = record.capped
    ? `  (cut: ${Object.entries(record.capped)
        .map(([field, bytes]) => `${field} ${bytes} bytes`)
        .join(", ")})`
    : "";
  const at = record.at.slice(11, 19);
  switch (entry.kind) {
    case "prefix":
      return [`[${at}] system prompt changed${capped}`, ...block(entry.system)];
    case "message": {
      const tool = entry.toolName ? ` ${entry.toolName}` : "";
      const head = `[${at}] ${entry.role} · ${entry.part}${stripControls(tool)}${capped}`;
      const notices = entry.notices?.length
        ? [`    notices: ${entry.notices.map((n) => n.type).join(", ")}`]
        : [];
      if (entry.part === "answer") {
        // The model's answer as the next request replays it: shown in full as its `answer`
        // entry already, so one line saying it went back (and what it called), not a copy.
        const calls = replayedCalls(entry.json);
        const called = calls.length ? `: ${calls.map((c) => c.trim().split(" ")[1]).join(", ")}` : "";
        return [`[${at}] assistant · answer replayed as sent${stripControls(called)}${capped}`];
      }
      return [head, ...block(entry.text), ...notices];
    }
    case "answer": {
      const u = entry.usage;
      const usage = u
        ? `prompt ${u.promptTokens ?? "?"}, cached ${u.cachedTokens ?? "?"}, completion ${u.completionTokens ?? "?"}`
        : "usage not reported";
      const finish = entry.finishReason ? `, finish ${stripControls(entry.finishReason)}` : "";
      const attempt = entry.attempt && entry.attempt > 1 ? `, attempt ${entry.attempt}` : "";
      const replayed = entry.replayed ? "" : " (retried: not replayed)";
      const lines = [
        `[${at}] answer · ${stripControls(entry.model)}${replayed} — ${usage}${finish}${attempt}${capped}`,
      ];
      if (entry.reasoning) lines.push("  reasoning:", ...block(entry.reasoning));
      if (entry.text) lines.push(...block(entry.text, "  "));
      for (const call of entry.toolCalls) {
        const why = call.reason ? `: ${stripControls(call.reason)}` : "";
        lines.push(
          `  → ${stripControls(call.name)} [${call.disposition}${why}]`,
          ...block(call.rawArguments),
        );
        if (call.replayedArguments !== undefined)
          lines.push("    replayed as:", ...block(call.replayedArguments, "      "));
      }
      if (entry.error) lines.push(`  error: ${stripControls(entry.error)}`);
      return lines;
    }
    case "mcp-snapshot": {
      // MCP tool names come from servers (model-facing, untrusted): printed through the same
      // escaping as every model-written string (issue 29 rules), each on one line. When i25's
      // escaping function lands, oneLine should become it.
      const reused = entry.reused ? " (reused from the Harness's store)" : "";
      const lines = [
        `[${at}] MCP tools frozen for this conversation · sha256 ${entry.hash.slice(0, 16)}…${reused}`,
      ];
      for (const t of entry.tools) lines.push(`  ${oneLine(t.name)}  (${oneLine(`${t.server}/${t.tool}`)})`);
      for (const d of entry.down) lines.push(`  down: ${oneLine(d.server)}: ${oneLine(d.reason)}`);
      return lines;
    }
  }
}

/** The Turn's header line and its pick, fault and usage. */
function headerLines(t: TurnTranscript): string[] {
  const u = t.usage;
  const lines = [
    `Turn ${t.turnId}  ${t.state}#${t.agent}  ${t.outcome}  ${t.startedAt} → ${t.endedAt ?? "running"}`,
  ];
  if (t.pick) lines.push(`  pick ${t.pick.name} ${JSON.stringify(t.pick.arguments)}`);
  if (t.fault)
    lines.push(
      `  fault ${t.fault.reason}${t.fault.cause ? ` (cause ${t.fault.cause})` : ""}${t.fault.detail ? `: ${t.fault.detail}` : ""}`,
    );
  lines.push(
    `  usage prompt ${u.promptTokens ?? "?"}, cached ${u.cachedTokens ?? "?"}, completion ${u.completionTokens ?? "?"}, ${u.requests ?? 0} model requests`,
  );
  return lines.map(stripControls);
}

/**
 * The transcript of `turn` as text. `prefixShown`: the system prompt and tools this output
 * printed already (a continued conversation's next Turn shows them again only when changed).
 */
export function formatTranscript(
  turn: TurnTranscript,
  prefixShown?: { system: string; toolsJson: string },
): string {
  const lines = headerLines(turn);
  const p = turn.prefix;
  if (p && (p.system !== prefixShown?.system || p.toolsJson !== prefixShown?.toolsJson)) {
    lines.push("system:", ...block(p.system), `tools: ${stripControls(toolNames(p.toolsJson))}`);
  }
  if (turn.entries.length === 0) lines.push("  (no transcript recorded)");
  for (const record of turn.entries) lines.push(...entryLines(record));
  return `${lines.join("\n")}\n`;
}
