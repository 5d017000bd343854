import { z } from "zod";

/**
 * JSON Schema carried verbatim. Deliberately `record(unknown)`: a structured schema could
 * drop or reorder keywords, and the Menu's bytes must survive the wire (§3.3).
 */
export const JsonSchema = z.record(z.string(), z.unknown());
export type JsonSchema = z.infer<typeof JsonSchema>;

/**
 * One Menu item / tool: `{ name, description, parameters }` where `parameters` is the JSON
 * Schema of the event def's input (`z.toJSONSchema(input)`).
 * @see SPEC §3.3, §4.1
 */
export const Tool = z.object({
  name: z.string(),
  description: z.string(),
  parameters: JsonSchema,
});
export type Tool = z.infer<typeof Tool>;

/** A valid tool name: what OpenAI-compatible providers accept (§3.1). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** The Working tools' names; an event def may not take one of them (§3.1, §7.2). */
export const WORKING_TOOL_NAMES = ["read", "write", "edit", "bash", "grep", "find", "ls"] as const;
export type WorkingToolName = (typeof WORKING_TOOL_NAMES)[number];

/** An Agent's workspace access: which Working tools it gets (§7.2). */
export const WorkspaceAccess = z.enum(["none", "read", "write"]);
export type WorkspaceAccess = z.infer<typeof WorkspaceAccess>;

/** pi's thinking levels, a per-Turn dial (§3.1). */
export const ThinkingLevel = z.enum(["off", "minimal", "low", "medium", "high", "xhigh"]);
export type ThinkingLevel = z.infer<typeof ThinkingLevel>;
