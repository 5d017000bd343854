import { Jr2Error, TOOL_NAME_PATTERN, WORKING_TOOL_NAMES } from "@jr2/wire";
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

/** What an author passes to {@link defineEvent}. */
export interface EventDefInit {
  name: string;
  description?: string;
  input?: z.ZodObject;
  audience?: Audience;
}

const AUDIENCES: readonly Audience[] = ["agent", "gate", "any", "internal"];
const NO_ARGUMENTS = z.object({});

/**
 * Declares one event of a Machine's vocabulary.
 * @param init `{ name, description?, input?: ZodObject, audience? = "any" }`
 * @returns a frozen {@link EventDef}
 * @throws Jr2Error `JR2_ERR_SETUP_EVENT_NAME_INVALID` (not `^[A-Za-z0-9_-]{1,64}$`),
 *   `JR2_ERR_SETUP_EVENT_NAME_RESERVED` (a Working tool's name), `JR2_ERR_SETUP_EVENT_INPUT_INVALID`
 *   (input not a zod object, or audience unknown)
 * @see SPEC §3.1
 * @example defineEvent({ name: "approve", description: "Approve the change.", input: z.object({ summary: z.string() }) })
 */
export function defineEvent(init: EventDefInit): EventDef {
  const { name } = init;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new Jr2Error("JR2_ERR_SETUP_EVENT_NAME_INVALID", { name: String(name) });
  }
  if ((WORKING_TOOL_NAMES as readonly string[]).includes(name)) {
    throw new Jr2Error("JR2_ERR_SETUP_EVENT_NAME_RESERVED", {
      name,
      reason: `a Working tool is named so; reserved: ${WORKING_TOOL_NAMES.join(", ")}`,
    });
  }
  if (init.input !== undefined && !(init.input instanceof z.ZodObject)) {
    throw new Jr2Error("JR2_ERR_SETUP_EVENT_INPUT_INVALID", { name, got: typeof init.input });
  }
  const audience = init.audience ?? "any";
  if (!AUDIENCES.includes(audience)) {
    throw new Jr2Error("JR2_ERR_SETUP_EVENT_INPUT_INVALID", {
      name,
      got: `audience \`${String(audience)}\` (accepted: ${AUDIENCES.join(", ")})`,
    });
  }
  const input = init.input ?? null;
  return Object.freeze({
    name,
    description: init.description ?? "",
    input,
    audience,
    parameters: z.toJSONSchema(input ?? NO_ARGUMENTS) as Record<string, unknown>,
  });
}

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
