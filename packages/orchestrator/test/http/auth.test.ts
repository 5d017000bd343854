import { describe, expect, it } from "vitest";
import { checkBearer, INSTANCE_CALLER, mayReach, mintSandboxToken } from "../../src/index.js";

const keys = { instanceToken: "instance-secret-abc", sandboxKey: "sandbox-key-xyz" };

describe("bearer tokens (§4.4)", () => {
  it("accepts the instance token as full trust", () => {
    expect(checkBearer("Bearer instance-secret-abc", keys)).toEqual({ ok: true, caller: INSTANCE_CALLER });
  });

  it("accepts a sandbox token minted with the key, scoped to its sandbox (dots in the name allowed)", () => {
    expect(checkBearer(`Bearer ${mintSandboxToken(keys.sandboxKey, "ws.1")}`, keys)).toEqual({
      ok: true,
      caller: { kind: "sandbox", sandbox: "ws.1" },
    });
    expect(mintSandboxToken(keys.sandboxKey, "ws-1")).toMatch(/^ws-1\.[0-9a-f]{64}$/);
  });

  it("tells a missing token from a bad one", () => {
    expect(checkBearer(undefined, keys)).toEqual({ ok: false, code: "JR2_ERR_AUTH_MISSING" });
    expect(checkBearer("Basic abc", keys)).toEqual({ ok: false, code: "JR2_ERR_AUTH_MISSING" });
    expect(checkBearer("Bearer instance-secret-abd", keys)).toEqual({
      ok: false,
      code: "JR2_ERR_AUTH_INVALID",
    });
    const forged = mintSandboxToken("another-key", "ws-1");
    expect(checkBearer(`Bearer ${forged}`, keys)).toEqual({ ok: false, code: "JR2_ERR_AUTH_INVALID" });
    // Another sandbox's MAC on this sandbox's name.
    const swapped = `ws-2.${mintSandboxToken(keys.sandboxKey, "ws-1").split(".")[1]}`;
    expect(checkBearer(`Bearer ${swapped}`, keys)).toEqual({ ok: false, code: "JR2_ERR_AUTH_INVALID" });
  });

  it("accepts no sandbox token when no sandbox key is configured", () => {
    const token = mintSandboxToken(keys.sandboxKey, "ws-1");
    expect(checkBearer(`Bearer ${token}`, { instanceToken: keys.instanceToken })).toMatchObject({
      ok: false,
    });
  });

  it("lets a sandbox reach only its own registrations; the instance Harness's token (sandbox `instance`) reaches instance-scoped ones; explicit endpoints only the instance token", () => {
    expect(mayReach(INSTANCE_CALLER, "instance")).toBe(true);
    expect(mayReach(INSTANCE_CALLER, "ws-1")).toBe(true);
    expect(mayReach({ kind: "sandbox", sandbox: "ws-1" }, "ws-1")).toBe(true);
    expect(mayReach({ kind: "sandbox", sandbox: "ws-1" }, "ws-2")).toBe(false);
    expect(mayReach({ kind: "sandbox", sandbox: "instance" }, "instance")).toBe(true);
    expect(mayReach({ kind: "sandbox", sandbox: "ws-1" }, "instance")).toBe(false);
    expect(mayReach({ kind: "sandbox", sandbox: "explicit:http://h" }, "explicit:http://h")).toBe(false);
    expect(mayReach(INSTANCE_CALLER, "explicit:http://h")).toBe(true);
  });
});
