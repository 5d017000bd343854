import { z } from "zod";
import { PickAnswer } from "./picks.js";

/**
 * A structured notice the Harness renders into the Turn part (one line each, §7.3).
 * `conversation-new`: the conversation was lost and this is a new one (§5.3);
 * `pick-answer`: the answer to a pick the model did not get to read (§5.6);
 * `readmitted`: the Turn was cut by a Harness restart and is admitted again;
 * `text-call`: the model's last answer wrote a tool call out as text instead of calling it
 * (a nudge's notice; an older Harness skips it, §7.6).
 */
export const Notice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("conversation-new") }),
  z.object({ type: z.literal("pick-answer"), pick: z.string(), answer: PickAnswer }),
  z.object({ type: z.literal("readmitted") }),
  /** `where: "reasoning"`: the markup was inside the reasoning (issue 25 §4); an older Harness ignores it. */
  z.object({ type: z.literal("text-call"), where: z.enum(["reasoning"]).optional() }),
  /** The server could not read the model's last answer as a tool call (issue 25 §13); an older Harness skips it. */
  z.object({ type: z.literal("unparsable-output") }),
]);
export type Notice = z.infer<typeof Notice>;
