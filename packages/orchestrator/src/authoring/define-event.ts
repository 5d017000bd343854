import { Jr2Error, MCP_TOOL_PREFIX, TOOL_NAME_PATTERN, WORKING_TOOL_NAMES } from "@jr2/wire";
import { z } from "zod";
import { type Audience, type EventDef, NO_ARGUMENTS } from "../menu/event-def.js";

export type { Audience, EventDef } from "../menu/event-def.js";

/**
 * What an author passes to {@link defineEvent}. The parameters keep the literal `name`, the zod
 * `input` and the `audience` in the def's type, so `jr2Setup` can type each event (ADR-0010).
 */
export interface EventDefInit<
  TName extends string = string,
  TInput extends z.ZodObject | undefined = z.ZodObject | undefined,
  TAudience extends Audience = Audience,
> {
  name: TName;
  description?: string;
  input?: TInput;
  audience?: TAudience;
}

/**
 * An {@link EventDef} that remembers, in its type, its literal name, its payload schema (`null`:
 * no arguments) and its audience. The runtime value is the same frozen def.
 */
export interface TypedEventDef<
  TName extends string = string,
  TInput extends z.ZodObject | null = z.ZodObject | null,
  TAudience extends Audience = Audience,
> extends EventDef {
  readonly name: TName;
  readonly input: TInput;
  readonly audience: TAudience;
}

const AUDIENCES: readonly Audience[] = ["agent", "gate", "any", "internal"];

/**
 * Declares one event of a Machine's vocabulary.
 * @param init `{ name, description?, input?: ZodObject, audience? = "any" }`
 * @returns a frozen {@link EventDef}, typed as a {@link TypedEventDef} (its name a literal)
 * @throws Jr2Error `JR2_ERR_SETUP_EVENT_NAME_INVALID` (not `^[A-Za-z0-9_-]{1,64}$`),
 *   `JR2_ERR_SETUP_EVENT_NAME_RESERVED` (a Working tool's name), `JR2_ERR_SETUP_EVENT_INPUT_INVALID`
 *   (input not a zod object, or audience unknown)
 * @see SPEC §3.1
 * @example defineEvent({ name: "approve", description: "Approve the change.", input: z.object({ summary: z.string() }) })
 */
export function defineEvent<
  const TName extends string,
  TInput extends z.ZodObject | undefined = undefined,
  const TAudience extends Audience = "any",
>(
  init: EventDefInit<TName, TInput, TAudience>,
): TypedEventDef<TName, TInput extends z.ZodObject ? TInput : null, TAudience> {
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
  if (name.startsWith(MCP_TOOL_PREFIX)) {
    // MCP tools are named `mcp__<server>__<tool>` in the same tools block (issue 29, ADR-0230).
    throw new Jr2Error("JR2_ERR_SETUP_EVENT_NAME_RESERVED", {
      name,
      reason: `names starting with \`${MCP_TOOL_PREFIX}\` are an Agent's MCP tools (\`mcp__<server>__<tool>\`)`,
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
  const def: EventDef = Object.freeze({
    name,
    description: init.description ?? "",
    input,
    audience,
    parameters: z.toJSONSchema(input ?? NO_ARGUMENTS) as Record<string, unknown>,
  });
  // The checks above hold what the type says: the name, input and audience are the init's.
  return def as TypedEventDef<TName, TInput extends z.ZodObject ? TInput : null, TAudience>;
}
