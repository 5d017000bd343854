/**
 * probeSandbox names the failing layer and its fix (issue 26 item 6), and the allow-list match.
 */
import { afterEach, describe, expect, it } from "vitest";
import { hostAllowed, probeSandbox } from "../src/index.js";

describe("probeSandbox", () => {
  afterEach(() => {
    delete process.env.JR2_BWRAP;
  });

  it("names a missing bwrap and the install command", async () => {
    process.env.JR2_BWRAP = "/nonexistent/bwrap";
    const p = await probeSandbox();
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.layer).toBe("bwrap missing");
    expect(p.fix).toContain("apt-get install bubblewrap");
  });

  it("works on this machine as a non-root uid, and says how memory is bounded", async () => {
    const p = await probeSandbox();
    if (!p.ok && process.env.CI !== "true") return; // a developer machine without bwrap
    expect(p).toMatchObject({ ok: true });
    expect(p.user.uid).not.toBe(0);
    expect(["cgroup", "container"]).toContain(p.memory);
  });
});

describe("hostAllowed", () => {
  it("matches names exactly, or strict subdomains of a *. entry, case-insensitively", () => {
    const allow = ["registry.npmjs.org", "*.pythonhosted.org"];
    expect(hostAllowed(allow, "Registry.NPMjs.org")).toBe(true);
    expect(hostAllowed(allow, "registry.npmjs.org.")).toBe(true);
    expect(hostAllowed(allow, "evil-registry.npmjs.org")).toBe(false);
    expect(hostAllowed(allow, "registry.npmjs.org.evil.com")).toBe(false);
    expect(hostAllowed(allow, "files.pythonhosted.org")).toBe(true);
    expect(hostAllowed(allow, "pythonhosted.org")).toBe(false);
  });
});
