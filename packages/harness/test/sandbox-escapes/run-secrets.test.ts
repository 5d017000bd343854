/**
 * Escape suite, secrets and loopback services (issue 26 "Rules"): from run A's bash — a real
 * tool call of a real Harness whose environment holds its bearer (as main.ts's does) — read
 * `/proc/*\/environ` and `/proc/*\/cmdline` for any JR2_ value or token, print the Harness token
 * reversed, base64'd or split (it must be unreachable, not merely redacted), and connect to the
 * Orchestrator's, the Harness's and the model server's loopback ports. Each is refused, and the
 * tool result says why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EscapeStack, HARNESS_TOKEN, noSandbox, startEscapeStack } from "./escape-harness.js";

const reverse = (t: string) => [...t].reverse().join("");
const b64 = (t: string) => Buffer.from(t).toString("base64");

describe.skipIf(noSandbox)(
  "escapes to the Harness's secrets and loopback services, through real bash calls",
  () => {
    let s: EscapeStack;
    const saved = process.env.JR2_HARNESS_TOKEN;
    beforeAll(async () => {
      // The Harness's environment as in production: its bearer and a canary JR2_ value.
      process.env.JR2_HARNESS_TOKEN = HARNESS_TOKEN;
      process.env.JR2_ESCAPE_CANARY = "jr2-canary-5d1c0b";
      s = await startEscapeStack();
    });
    afterAll(async () => {
      if (saved === undefined) delete process.env.JR2_HARNESS_TOKEN;
      else process.env.JR2_HARNESS_TOKEN = saved;
      delete process.env.JR2_ESCAPE_CANARY;
      await s?.close();
    });

    /** Every form of the token a model could smuggle past a redactor. */
    const tokenForms = () => [
      HARNESS_TOKEN,
      reverse(HARNESS_TOKEN),
      b64(HARNESS_TOKEN),
      HARNESS_TOKEN.slice(0, 7),
      "jr2-canary-5d1c0b",
      reverse("jr2-canary-5d1c0b"),
    ];

    it("/proc/*/environ and /proc/*/cmdline hold no JR2_ value and no token: the Harness's process is not there", async () => {
      const command =
        "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f; echo; done; env; ls /proc | grep -c '^[0-9]'";
      const { result } = await s.call("bash", { command });
      expect(result).not.toContain("JR2_");
      for (const form of tokenForms()) expect(result).not.toContain(form);
      // Only the sandbox's own few processes are visible (its own PID namespace).
      const count = Number(result.trim().split("\n").at(-1));
      expect(count).toBeGreaterThan(0);
      expect(count).toBeLessThan(8);
    });

    it("the token printed reversed, base64'd or split is unreachable: there is nothing to print", async () => {
      const command = [
        'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < $f; done | grep -a "^JR2_HARNESS_TOKEN=" | cut -d= -f2 | rev',
        'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < $f; done | grep -a "TOKEN" | base64',
        'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < $f; done | grep -a "TOKEN" | fold -w 3',
        'echo "parent: $(cat /proc/$PPID/cmdline 2>&1 | tr "\\0" " ")"',
        "echo done",
      ].join("; ");
      const { result } = await s.call("bash", { command });
      for (const form of tokenForms()) expect(result).not.toContain(form);
      // Not redacted after the fact: nothing was found to redact.
      expect(result).not.toContain("[redacted]");
      expect(result).toContain("done");
    });

    it("the read tool cannot open the Harness's /proc files either", async () => {
      const { result } = await s.call("read", { path: `/proc/${process.pid}/environ` });
      for (const form of tokenForms()) expect(result).not.toContain(form);
      expect(result).toMatch(/outside|refused/i);
    });

    it("the Orchestrator's, the Harness's and the model server's loopback ports are unreachable", async () => {
      const ports = {
        orchestrator: Number(new URL(s.orch.url).port),
        harness: s.harnessPort,
        "model server": s.upstream.port,
      };
      for (const [who, port] of Object.entries(ports)) {
        const command = `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED) 2>&1; curl -sS --max-time 3 http://127.0.0.1:${port}/ 2>&1; echo end`;
        const { result } = await s.call("bash", { command });
        expect(result, who).not.toContain("CONNECTED");
        // The model reads why: nothing listens on its own loopback.
        expect(result, who).toMatch(/Connection refused|Couldn't connect/);
      }
    });
  },
);
