/**
 * `jr2 workflows [<workflow>]`: the served workflows, each with the input keys `jr2 run
 * <workflow> --input` accepts — type, required or its default, description — and a start
 * command with the required keys to fill in. Reads `GET /workflows` (each workflow's input as
 * JSON Schema). Newcomer review, session 10: `review`'s `task` was in no README line and no
 * command listed a workflow's inputs; an unknown key is refused at start, but only then.
 * @see SPEC §4.1 (GET /workflows)
 */
import { parseArgs } from "node:util";
import type { WorkflowSummary } from "@jr2/wire";
import { call, resolveTarget, TARGET_OPTIONS } from "./client.js";
import { JR2 } from "./invocation.js";

export const workflowsUsage = `${JR2} workflows [<workflow>] [--url URL] [--token T]`;

/** One JSON Schema property, as far as this printer reads it. */
interface Property {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Property[];
  items?: Property;
  default?: unknown;
  description?: string;
}

/**
 * `jr2 workflows`: every served workflow and its inputs; with `<workflow>` that one only.
 * @returns 0
 * @throws Error naming an unknown workflow and the served ones; the client's errors
 */
export async function workflowsCommand(
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: TARGET_OPTIONS,
  });
  const target = resolveTarget(values, process.env);
  const all = await call<WorkflowSummary[]>(target, "GET", "/workflows");
  const name = positionals[0];
  const shown = name === undefined ? all : all.filter((w) => w.name === name);
  if (name !== undefined && shown.length === 0)
    throw new Error(`${notServed(name, all)}; \`${JR2} workflows\` lists them with their inputs`);
  if (shown.length === 0) out.write("no workflows served\n");
  out.write(shown.map((w) => formatWorkflow(w.name, w.input)).join("\n"));
  return 0;
}

/** `no workflow \`<name>\` is served (served: …)`: `jr2 workflows <name>` and `jr2 run <name> --help`. */
export function notServed(name: string, all: readonly WorkflowSummary[]): string {
  return `no workflow \`${name}\` is served (served: ${all.map((w) => w.name).join(", ") || "none"})`;
}

/**
 * A workflow's inputs in words: one line per key (type; `required`, or `optional` with its
 * default; its description), then the start command with the required keys as `<key>`
 * placeholders. A workflow without an input schema takes any input (or none). Pure.
 */
export function formatWorkflow(name: string, schema: Record<string, unknown> | null): string {
  const properties = (schema?.properties ?? {}) as Record<string, Property>;
  const listed = new Set((schema?.required as string[] | undefined) ?? []);
  const keys = Object.keys(properties);
  // zod's JSON Schema (output side) lists a key with a default as required: it is optional to give.
  const required = keys.filter((k) => listed.has(k) && properties[k]!.default === undefined);
  const width = Math.max(...keys.map((k) => k.length), 3);
  const lines = keys.map((key) => {
    const p = properties[key]!;
    const need =
      p.default !== undefined
        ? `optional, default ${JSON.stringify(p.default)}`
        : required.includes(key)
          ? "required"
          : "optional";
    return `    ${key.padEnd(width)}  ${typeOf(p)}, ${need}${p.description ? ` — ${p.description}` : ""}\n`;
  });
  const input =
    required.length > 0
      ? ` --input '${JSON.stringify(Object.fromEntries(required.map((k) => [k, `<${k}>`])))}'`
      : "";
  const head =
    schema === null
      ? "  input: any (the workflow declares no input schema)\n"
      : keys.length === 0
        ? "  input: none\n"
        : `  input (--input JSON, keys):\n${lines.join("")}`;
  return `${name}\n${head}  start: ${JR2} run ${name}${input} --follow\n`;
}

/** A property's type in a few words: `string`, `"low" | "high"`, `string[]`, `number | null`. */
function typeOf(p: Property): string {
  if (p.enum) return p.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (p.const !== undefined) return JSON.stringify(p.const);
  if (p.anyOf) return p.anyOf.map(typeOf).join(" | ");
  if (p.type === "array") return `${p.items ? typeOf(p.items) : "any"}[]`;
  if (Array.isArray(p.type)) return p.type.join(" | ");
  return p.type ?? "any";
}
