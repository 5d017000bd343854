/**
 * Whether the Harness's Working tools run sandboxed (issue 26 item 6, ADR-0173): decided once at
 * start from `probeSandbox()` and `JR2_SANDBOX`, printed in the start banner, and read by every
 * Turn that has Working tools — a broken sandbox refuses `read`/`write` Turns with
 * `JR2_ERR_SANDBOX_UNAVAILABLE`; `JR2_SANDBOX=off` runs them unsandboxed and says so on the feed.
 */
import { probeSandbox, type SandboxProbe, type SandboxUser, type ToolLimits } from "@jr2/sandbox";
import { jr2Error } from "@jr2/wire";

/** The Harness's sandbox, decided at start. */
export type WorkingSandbox =
  | {
      mode: "on";
      bwrap: string;
      user: SandboxUser;
      memory: "cgroup" | "container";
      /** What this host withholds from the sandbox (the probe's `reduced`), said in the banner. */
      reduced?: string[];
      /** Per tool process; default the sandbox's DEFAULT_TOOL_LIMITS (tests lower them). */
      limits?: Partial<ToolLimits>;
    }
  | { mode: "broken"; probe: Extract<SandboxProbe, { ok: false }> }
  | { mode: "off" };

/** What the feed says on every Turn with Working tools while `JR2_SANDBOX=off`. */
export const SANDBOX_OFF_NOTICE =
  "JR2_SANDBOX=off: this Turn's Working tools run unsandboxed, as the Harness's own user, with the Harness's network and every other run's files reachable";

/** What the feed says on every Turn whose workspace has `network: "host"`. */
export const NETWORK_HOST_NOTICE =
  'network: "host": this Turn\'s Working tools reach the whole network, every loopback service included (the Orchestrator, the Harness, a model server)';

/**
 * The sandbox for `env`: `JR2_SANDBOX=off` (or `0`/`false`) turns it off without probing;
 * anything else probes bwrap (as the sandbox uid) and is `on` or `broken`.
 * @throws Error when `JR2_SANDBOX` holds a value other than on/off (the fix: unset it or `off`).
 */
export async function decideSandbox(env: NodeJS.ProcessEnv): Promise<WorkingSandbox> {
  const raw = (env.JR2_SANDBOX ?? "").trim().toLowerCase();
  if (raw === "off" || raw === "0" || raw === "false") return { mode: "off" };
  if (raw !== "" && raw !== "on" && raw !== "1" && raw !== "true") {
    throw new Error(`JR2_SANDBOX must be \`on\` or \`off\`, got \`${env.JR2_SANDBOX}\``);
  }
  const probe = await probeSandbox();
  if (!probe.ok) return { mode: "broken", probe };
  return { mode: "on", bwrap: probe.bwrap, user: probe.user, memory: probe.memory, reduced: probe.reduced };
}

/** The start banner's sandbox line. */
export function sandboxBanner(sandbox: WorkingSandbox): string {
  switch (sandbox.mode) {
    case "on":
      return `jr2 harness sandbox: bwrap ${sandbox.bwrap}, sandbox uid ${sandbox.user.uid}, memory: ${sandbox.memory === "cgroup" ? "cgroup v2 (delegated)" : "the container's limit (no delegated cgroup)"}${(sandbox.reduced ?? []).map((r) => `; reduced: ${r}`).join("")}`;
    case "off":
      return "jr2 harness sandbox: OFF (JR2_SANDBOX=off) — Working tools run as the Harness's own user; every Turn with Working tools says so on its feed";
    case "broken":
      return `jr2 harness sandbox: NOT WORKING — ${sandbox.probe.layer}${sandbox.probe.detail ? ` (${sandbox.probe.detail})` : ""}; fix: ${sandbox.probe.fix}. Turns with workspace "read" or "write" are refused until it works (or JR2_SANDBOX=off)`;
  }
}

/**
 * Why a Turn with Working tools cannot run (the settlement's message, coded
 * `JR2_ERR_SANDBOX_UNAVAILABLE`), or `undefined` when it may.
 */
export function sandboxRefusal(sandbox: WorkingSandbox): string | undefined {
  if (sandbox.mode !== "broken") return undefined;
  const { layer, detail, fix } = sandbox.probe;
  return `JR2_ERR_SANDBOX_UNAVAILABLE: ${jr2Error("JR2_ERR_SANDBOX_UNAVAILABLE", { layer, detail: detail || "no detail", fix }).error}`;
}

/**
 * What the feed must say on this Turn (every Turn with Working tools, not only the first):
 * the sandbox is off, or the workspace reaches the host's network.
 */
export function sandboxWarnings(
  sandbox: WorkingSandbox | undefined,
  hasWorkingTools: boolean,
  network: readonly string[] | "host" | undefined,
): string[] {
  if (!hasWorkingTools) return [];
  const out: string[] = [];
  if (sandbox?.mode === "off") out.push(SANDBOX_OFF_NOTICE);
  if (network === "host") out.push(NETWORK_HOST_NOTICE);
  return out;
}
