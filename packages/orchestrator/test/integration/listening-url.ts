/**
 * The URL a `jr2 serve` child prints (`… listening on http://…`), for integration tests that
 * start the built CLI themselves.
 */
import type { ChildProcess } from "node:child_process";

/**
 * Resolves with the URL `child` says it listens on; rejects with everything it printed when it
 * exits first (`label` names it: "jr2 serve").
 */
export function listeningUrl(child: ChildProcess, label = "jr2 serve"): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("exit", (code) => reject(new Error(`${label} exited ${code}: ${out}`)));
  });
}
