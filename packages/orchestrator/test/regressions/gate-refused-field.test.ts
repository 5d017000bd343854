/**
 * Regression (issue 22 §5): `jr2 gate` printed a refused payload as the bare error
 * (`payload for \`publish\` is invalid: …`), while the terminal prompt and the console named the
 * field; and a missing field read like a wrong one. Root cause: gateCommand threw the 400 to
 * main instead of reading its `issues`. Now it names each field, missing told from wrong.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { gateCommand } from "../../src/cli/run-command.js";

let server: Server | undefined;
afterEach(() => server?.close());

/** An Orchestrator refusing every Gate answer with the payload issues zod gives. */
async function refusing(): Promise<string> {
  const listening = createServer((_req, res) => {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        error:
          "payload for `publish` is invalid: Invalid input: expected string, received undefined; Too small",
        code: "JR2_ERR_GATE_PAYLOAD_INVALID",
        type: "publish",
        issues: [
          {
            path: ["channel"],
            message: "Invalid input: expected string, received undefined",
            code: "invalid_type",
          },
          { path: ["priority"], message: "Too small: expected number to be >=1", code: "too_small" },
        ],
      }),
    );
  });
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

describe("jr2 gate with a refused payload (issue 22 §5)", () => {
  it("names each refused field, a missing one told from a wrong value, and exits 1", async () => {
    const url = await refusing();
    const out = new PassThrough();
    let text = "";
    out.on("data", (c) => {
      text += String(c);
    });
    const code = await gateCommand(
      [
        "run-1",
        "publish_gate",
        "publish",
        "--payload",
        '{"priority":0}',
        "--url",
        url,
        "--token",
        "t".repeat(32),
      ],
      out as unknown as typeof process.stdout,
    );
    expect(code).toBe(1);
    expect(text).toContain("field `channel`: missing — it is required");
    expect(text).toContain("field `priority`: wrong value — Too small: expected number to be >=1");
  });
});
