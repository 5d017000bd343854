import { createHash } from "node:crypto";

/**
 * The MCP snapshot's canonical form (issue 29 item 3, ADR-0230): what makes the tools block
 * byte-stable however a server orders, decorates or re-lists its tools.
 */

/** Longest tool name a provider takes (OpenAI's limit). */
export const MAX_TOOL_NAME = 64;

/** One MCP tool as the model reads it: the canonical name and the server's own. */
export interface CanonicalTool {
  /** `mcp__<server>__<tool>`, sanitized and bounded ({@link canonicalToolName}). */
  name: string;
  /** The server that offers it, and the tool's name there (what `tools/call` is sent). */
  server: string;
  tool: string;
  description: string;
  /** The input JSON Schema with every object's keys sorted. */
  inputSchema: Record<string, unknown>;
}

/** A conversation's frozen MCP tools: sorted by name, and the sha256 of their canonical JSON. */
export interface McpSnapshot {
  hash: string;
  tools: CanonicalTool[];
}

/**
 * `mcp__<server>__<tool>` with every character outside `[A-Za-z0-9_-]` made `_`; a name over
 * 64 characters is cut to 55 + `_` + the first 8 hex of the sha256 of the uncut name, so two
 * long names that share 55 characters still differ.
 * @example canonicalToolName("gh", "issues.list") // "mcp__gh__issues_list"
 */
export function canonicalToolName(server: string, tool: string): string {
  const name = `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_");
  if (name.length <= MAX_TOOL_NAME) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `${name.slice(0, 55)}_${hash}`;
}

/** `value` with every object's keys in code-point order, recursively (arrays keep their order). */
export function stableKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stableKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = stableKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** A tool as a server lists it (the SDK's `Tool`; only these fields are read). */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
}

/**
 * One server's listed tools in canonical form. Kept: name, description, input schema (keys
 * sorted). Dropped as volatile: `title`, `annotations`, `_meta`, `outputSchema`, `icons` and
 * anything a later protocol adds — they vary between listings and the model needs none of them.
 */
export function canonicalTools(server: string, listed: readonly ListedTool[]): CanonicalTool[] {
  return listed.map((t) => ({
    name: canonicalToolName(server, t.name),
    server,
    tool: t.name,
    description: cleanDescription(t.description ?? ""),
    inputSchema: stableKeys(
      typeof t.inputSchema === "object" && t.inputSchema !== null ? t.inputSchema : { type: "object" },
    ) as Record<string, unknown>,
  }));
}

/**
 * C0 and C1 controls except tab and newline, DEL, and the bidi controls (embeddings, overrides,
 * isolates, marks): a description is words for the model, and these only hide or reorder what
 * a person reading the transcript sees (an ANSI clear-screen, a right-to-left override).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const HIDING = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** ANSI escape sequences: CSI (`ESC [ … letter`) and OSC (`ESC ] … BEL|ST`), removed whole. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const ANSI = /\u001B\[[0-?]*[ -/]*[@-~]|\u001B\][^\u0007\u001B]*(\u0007|\u001B\\)?/g;

/**
 * A tool's description as the tools block carries it (ADR-0236): ANSI escape sequences removed
 * whole, then every other control and bidi character (see {@link HIDING}), `\r\n` made `\n`.
 * Newlines stay (descriptions are paragraphs); nothing else changes, so a clean server's
 * description — and the request bytes — are unchanged.
 */
export function cleanDescription(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(ANSI, "").replace(HIDING, "");
}

/** Two tools whose canonical names are equal (`a.b` and `a_b`): decided at listing (ADR-0230). */
export interface NameCollision {
  name: string;
  first: string;
  second: string;
}

/**
 * The snapshot of every server's canonical tools: sorted by name (code-point order), tools
 * whose canonical names collide left out (both: neither is the "right" one) and reported.
 */
export function snapshotOf(tools: readonly CanonicalTool[]): {
  snapshot: McpSnapshot;
  collisions: NameCollision[];
} {
  const byName = new Map<string, CanonicalTool[]>();
  for (const t of tools) byName.set(t.name, [...(byName.get(t.name) ?? []), t]);
  const collisions: NameCollision[] = [];
  const kept: CanonicalTool[] = [];
  for (const [name, group] of byName) {
    if (group.length === 1) kept.push(group[0]!);
    else
      collisions.push({
        name,
        first: `${group[0]!.server}/${group[0]!.tool}`,
        second: `${group[1]!.server}/${group[1]!.tool}`,
      });
  }
  kept.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { snapshot: { hash: snapshotHash(kept), tools: kept }, collisions };
}

/** sha256 (hex) of the tools' canonical JSON (name, description, schema; server order-free). */
export function snapshotHash(tools: readonly CanonicalTool[]): string {
  const json = JSON.stringify(tools.map((t) => [t.name, t.description, t.inputSchema]));
  return createHash("sha256").update(json).digest("hex");
}
