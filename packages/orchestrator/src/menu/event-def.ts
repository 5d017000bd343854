/**
 * What an event is to the Menu and the delivery checks: its name, description, payload schema,
 * audience and the JSON Schema every Menu carries. `defineEvent` (authoring) builds one.
 * @see SPEC §3.1
 */
import { z } from "zod";

/** Who may send an event: an Agent's pick, a Gate's party, both, or the workflow itself. */
export type Audience = "agent" | "gate" | "any" | "internal";

/**
 * An event def: one word of a Machine's vocabulary. `parameters` is the JSON Schema of
 * `input` (`z.toJSONSchema`), computed once so every Menu carries the same bytes.
 * @see SPEC §3.1
 */
export interface EventDef {
  readonly name: string;
  readonly description: string;
  /** The payload schema; `null` = the event takes no arguments. */
  readonly input: z.ZodObject | null;
  readonly audience: Audience;
  readonly parameters: Record<string, unknown>;
}

/** The schema of an event that takes no arguments. */
export const NO_ARGUMENTS = z.object({});

/** The schema a pick's arguments are validated with: the def's input, or "no arguments". */
export function argumentsSchemaOf(def: EventDef): z.ZodObject {
  return def.input ?? NO_ARGUMENTS;
}

/** May `def` appear on an Agent's Menu? (§3.2: audience `agent` or `any`) */
export function isAgentAudience(def: EventDef): boolean {
  return def.audience === "agent" || def.audience === "any";
}

/** May a Gate send `def`? (§6: audience `gate` or `any`) */
export function isGateAudience(def: EventDef): boolean {
  return def.audience === "gate" || def.audience === "any";
}
