/**
 * A Turn transcript for a terminal (`jr2 transcript`, ADR-0257): the Turn's header, its
 * conversation's system prompt and tools once, then each entry in order — a message labelled
 * by its part, an answer with its reasoning, text, tool calls and their arguments, its usage
 * and finish reason. Every text a model (or its server) wrote goes through @jr2/wire's
 * `escapeModelText` (issue 25 §7): inside a line — names, reasons, details — newlines and every
 * control or bidi character come out as visible escapes, so a tool name cannot print a line of
 * jr2's own; a block under a label keeps its newlines and tabs, each line indented. `--json`
 * prints the answer raw instead.
 * @see issue 11 item 4
 */
import {
  escapeModelText,
  TRANSCRIPT_FIELD_CAP_BYTES,
  type TranscriptRecord,
  type TurnTranscript,
} from "@jr2/wire";

/** Text printed inside one line: everything a terminal acts on escaped, newlines included. */
const inLine = (text: string): string => escapeModelText(text);

/** The tools block's names, or its text when it is not a JSON array of function tools. */
function toolNames(toolsJson: string): string {
  try {
    const tools = JSON.parse(toolsJson) as Array<{ function?: { name?: string }; name?: string }>;
    return tools.map((t) => inLine(t.function?.name ?? t.name ?? "?")).join(", ") || "(none)";
  } catch {
    return inLine(toolsJson);
  }
}

/** The tool calls of a replayed assistant message's JSON, one line each (none when it has none). */
function replayedCalls(json: string): string[] {
  try {
    const m = JSON.parse(json) as {
      tool_calls?: Array<{ function?: { name?: string; arguments?: string } }>;
    };
    return (m.tool_calls ?? []).map(
      (c) => `    → ${inLine(c.function?.name ?? "?")} ${inLine(c.function?.arguments ?? "")}`,
    );
  } catch {
    return [];
  }
}

/** `text` indented under a label. */
function block(text: string, indent = "    "): string[] {
  return escapeModelText(text, { lines: "keep" })
    .split("\n")
    .map((l) => `${indent}${l}`);
}

/**
 * Where a field was cut when stored and how much was left out (issue 25 §9): the line printed
 * right after the field's text, at the cut; nothing when `path` was not cut.
 */
function cutLines(record: TranscriptRecord, path: string, stored: string, indent = "    "): string[] {
  const full = record.capped?.[path];
  if (full === undefined) return [];
  const kept = Buffer.byteLength(stored, "utf8");
  return [
    `${indent}[cut here when stored, after byte ${kept} of ${full}: ${full - kept} bytes (${sizeText(full - kept)}) left out]`,
  ];
}

/** `1.9 MiB`, `12.3 KiB`, `512 B`. */
function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/** The lines of one entry. */
function entryLines(record: TranscriptRecord): string[] {
  const { entry } = record;
  const capped = record.capped
    ? `  (cut when stored: ${Object.entries(record.capped)
        .map(([field, bytes]) => `${field} had ${bytes} bytes, kept to ${TRANSCRIPT_FIELD_CAP_BYTES}`)
        .join(", ")})`
    : "";
  const at = record.at.slice(11, 19);
  switch (entry.kind) {
    case "prefix":
      return [
        `[${at}] system prompt changed${capped}`,
        ...block(entry.system),
        ...cutLines(record, "system", entry.system),
      ];
    case "message": {
      const tool = entry.toolName ? ` ${entry.toolName}` : "";
      const head = `[${at}] ${entry.role} · ${entry.part}${inLine(tool)}${capped}`;
      const notices = entry.notices?.length
        ? [`    notices: ${entry.notices.map((n) => n.type).join(", ")}`]
        : [];
      if (entry.part === "answer") {
        // The model's answer as the next request replays it: shown in full as its `answer`
        // entry already, so one line saying it went back (and what it called), not a copy.
        const calls = replayedCalls(entry.json);
        const called = calls.length ? `: ${calls.map((c) => c.trim().split(" ")[1]).join(", ")}` : "";
        return [`[${at}] assistant · answer replayed as sent${called}${capped}`];
      }
      return [head, ...block(entry.text), ...cutLines(record, "text", entry.text), ...notices];
    }
    case "answer": {
      const u = entry.usage;
      const usage = u
        ? `prompt ${u.promptTokens ?? "?"}, cached ${u.cachedTokens ?? "?"}, completion ${u.completionTokens ?? "?"}`
        : "usage not reported";
      const finish = entry.finishReason ? `, finish ${inLine(entry.finishReason)}` : "";
      const attempt = entry.attempt && entry.attempt > 1 ? `, attempt ${entry.attempt}` : "";
      const replayed = entry.replayed ? "" : " (retried: not replayed)";
      const lines = [
        `[${at}] answer · ${inLine(entry.model)}${replayed} — ${usage}${finish}${attempt}${capped}`,
      ];
      if (entry.reasoning)
        lines.push(
          "  reasoning:",
          ...block(entry.reasoning),
          ...cutLines(record, "reasoning", entry.reasoning),
        );
      if (entry.text) lines.push(...block(entry.text, "  "), ...cutLines(record, "text", entry.text, "  "));
      for (const [i, call] of entry.toolCalls.entries()) {
        const why = call.reason ? `: ${inLine(call.reason)}` : "";
        lines.push(
          `  → ${inLine(call.name)} [${call.disposition}${why}]`,
          ...block(call.rawArguments),
          ...cutLines(record, `toolCalls.${i}.rawArguments`, call.rawArguments),
        );
        if (call.replayedArguments !== undefined)
          lines.push(
            "    replayed as:",
            ...block(call.replayedArguments, "      "),
            ...cutLines(record, `toolCalls.${i}.replayedArguments`, call.replayedArguments, "      "),
          );
      }
      if (entry.error) lines.push(`  error: ${inLine(entry.error)}`);
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
  if (t.pick) lines.push(`  pick ${inLine(t.pick.name)} ${inLine(JSON.stringify(t.pick.arguments) ?? "")}`);
  if (t.fault)
    lines.push(
      `  fault ${t.fault.reason}${t.fault.cause ? ` (cause ${t.fault.cause})` : ""}${t.fault.detail ? `: ${inLine(t.fault.detail)}` : ""}`,
    );
  lines.push(
    `  usage prompt ${u.promptTokens ?? "?"}, cached ${u.cachedTokens ?? "?"}, completion ${u.completionTokens ?? "?"}, ${u.requests ?? 0} model requests`,
  );
  return lines.map(inLine);
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
    lines.push("system:", ...block(p.system), `tools: ${toolNames(p.toolsJson)}`);
  }
  if (turn.entries.length === 0) lines.push("  (no transcript recorded)");
  for (const record of turn.entries) lines.push(...entryLines(record));
  return `${lines.join("\n")}\n`;
}
