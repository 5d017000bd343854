/**
 * `jr2 workflows`' words for a workflow's input (newcomer review, session 10): each key with its
 * type, whether it must be given (a key with a default need not, though zod's JSON Schema lists
 * it as required) and its description, and a start command with the required keys to fill in.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatWorkflow } from "../src/cli/workflows-command.js";

describe("formatWorkflow", () => {
  it("says which keys are required, which have a default, and starts the run with the required ones", () => {
    const schema = z.toJSONSchema(
      z.object({
        repo: z.string().min(1).describe("the repository"),
        pushUrl: z.string().optional().describe("where merging pushes"),
        task: z.string().default("a hello() function"),
        severity: z.enum(["low", "high"]),
        labels: z.array(z.string()).optional(),
      }),
    ) as Record<string, unknown>;
    const text = formatWorkflow("review", schema);
    expect(text).toContain("    repo      string, required — the repository\n");
    expect(text).toContain("    pushUrl   string, optional — where merging pushes\n");
    expect(text).toContain('    task      string, optional, default "a hello() function"\n');
    expect(text).toContain('    severity  "low" | "high", required\n');
    expect(text).toContain("    labels    string[], optional\n");
    expect(text).toContain(`run review --input '{"repo":"<repo>","severity":"<severity>"}' --follow\n`);
  });

  it("says when a workflow declares no input, or takes none", () => {
    expect(formatWorkflow("free", null)).toContain("input: any (the workflow declares no input schema)");
    expect(formatWorkflow("bare", { type: "object", properties: {} })).toContain("input: none");
  });
});
