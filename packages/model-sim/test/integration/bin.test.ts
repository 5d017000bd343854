// The built `model-sim` bin: listens where asked, says so on stdout, answers, and stops on SIGTERM.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../../dist/main.js", import.meta.url));
let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill("SIGTERM");
});

function start(): Promise<string> {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`);
  child = spawn(process.execPath, [bin, "--port", "0", "--host", "127.0.0.1"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child!.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^model-sim listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
      if (match) resolve(match[1]!);
    });
    child!.once("exit", (code) => reject(new Error(`model-sim exited (${code}) before listening: ${out}`)));
  });
}

describe("model-sim bin", () => {
  it("prints its URL, serves a streamed pick, and exits 0 on SIGTERM", async () => {
    const url = await start();
    const models = await (await fetch(`${url}/v1/models`)).json();
    expect((models as { data: Array<{ id: string }> }).data.map((m: { id: string }) => m.id)).toContain(
      "obedient",
    );
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "script:finish",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "Go.\nAllowed now: dispute, finish." }],
        tools: ["dispute", "finish"].map((name) => ({
          type: "function",
          function: { name, parameters: { type: "object" } },
        })),
      }),
    });
    const text = await res.text();
    expect(text).toContain('"name":"finish"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const recorded = await (await fetch(`${url}/_sim/requests`)).json();
    expect(recorded).toHaveLength(1);
    const exited = new Promise<number | null>((resolve) => child!.once("exit", resolve));
    child!.kill("SIGTERM");
    expect(await exited).toBe(0);
    child = undefined;
  });

  it("runs as the README says, `pnpm model-sim`, from the repo root (and refuses a bad flag by name)", () => {
    const root = fileURLToPath(new URL("../../../../", import.meta.url));
    const help = execFileSync("pnpm", ["--silent", "model-sim", "--help"], { cwd: root, encoding: "utf8" });
    expect(help).toContain("model-sim — an OpenAI-compatible model simulator (not a model)");
    expect(help).toContain("--template qwen3|qwen3.6|llama3");
    let refused = "";
    try {
      execFileSync(process.execPath, [bin, "--reasoning-field", "thoughts"], {
        encoding: "utf8",
        stdio: "pipe",
      });
    } catch (err) {
      refused = String((err as { stderr?: string }).stderr);
    }
    expect(refused).toContain('--reasoning-field must be reasoning or reasoning_content, not "thoughts"');
  });
});
