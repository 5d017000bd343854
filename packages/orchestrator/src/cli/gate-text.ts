/**
 * A Gate as a person reads it in a terminal (`jr2 run --follow`, `jr2 show`): its question
 * (`meta.question`, the rest of `meta` as JSON) and each accepted event with its fields.
 */
import type { Gate, Tool } from "@jr2/wire";

/** An accepted event's fields from its JSON Schema: `reason: string (required)`. */
export function fieldsOf(tool: Tool): string {
  // Tolerant (§7.6): a tool from another Orchestrator may carry no parameters at all.
  const schema = (tool.parameters ?? {}) as {
    properties?: Record<string, { type?: unknown; enum?: unknown[] }>;
    required?: string[];
  };
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, p]) => {
    const type = Array.isArray(p.enum)
      ? p.enum.map((v) => JSON.stringify(v)).join("|")
      : String(p.type ?? "any");
    return `${name}: ${type}${required.has(name) ? "" : "?"}`;
  });
  return fields.length ? `{ ${fields.join(", ")} }` : "(no fields)";
}

/** The lines describing a Gate to a person: its question (`meta`) and what it accepts. */
export function describeGate(gate: Gate, indent: string): string[] {
  const meta = gate.meta as { question?: unknown } | undefined | null;
  const lines: string[] = [];
  if (meta && typeof meta.question === "string") lines.push(`${indent}question: ${meta.question}`);
  const rest = meta && typeof meta === "object" ? Object.entries(meta).filter(([k]) => k !== "question") : [];
  if (rest.length) lines.push(`${indent}meta: ${JSON.stringify(Object.fromEntries(rest))}`);
  for (const tool of gate.accepts ?? [])
    lines.push(
      `${indent}${tool.name} ${fieldsOf(tool)}${gate.acceptsNow.includes(tool.name) ? "" : "  (not now)"}${tool.description ? ` — ${tool.description}` : ""}`,
    );
  return lines;
}
