import type { RecordedRequest } from "./recordings.js";

/**
 * The shapes of a conformance stack: which target, what a scenario asks for, and what it gets
 * back. The targets (process-target.ts, image-target.ts) each produce the `Services` part.
 * @see SPEC §10, §11
 */

/** Which build of the two services the tier runs against. */
export type TargetKind = "process" | "image";

/** One Harness model-table entry (§7.7), as the Harness's `JR2_MODELS` takes it. */
export interface ModelEntry {
  baseUrl: string;
  id: string;
  contextWindow: number;
  maxTokens: number;
  apiKey?: string;
  compat?: Record<string, unknown>;
}

/** What a scenario needs to start a stack. */
export interface StackOptions {
  /** The repository root (built binaries are found below it). */
  repoRoot: string;
  /** The folder of workflow modules the Orchestrator serves. */
  workflowsDir: string;
  /** The Harness's model table, given model-sim's OpenAI base URL (`…/v1`). */
  models: (simBaseUrl: string) => Record<string, ModelEntry>;
  /** Extra Orchestrator env (e.g. `JR2_CRASH_AT`), on every start. */
  orchestratorEnv?: Record<string, string>;
  /** Extra Harness env (e.g. `OTEL_EXPORTER_OTLP_ENDPOINT`), laid over the instance Harness's (process target). */
  harnessEnv?: Record<string, string>;
  /** Extra model-sim arguments (e.g. `["--time-scale", "20", "--cache-blocks", "3000"]`, issue 30). */
  simArgs?: string[];
  /** The sandbox name the Harness's token is minted for (default `instance`, §4.4). */
  sandbox?: string;
  /** Image tags (image target). */
  images?: { orchestrator: string; harness: string };
}

/** A running stack of model-sim, Orchestrator and Harness. */
export interface Stack {
  target: TargetKind;
  simUrl: string;
  orchestratorUrl: string;
  harnessUrl: string;
  /** Instance token (full trust, §4.4) and the Harness bearer. */
  instanceToken: string;
  harnessToken: string;
  /** Every secret value the stack gave its services (tokens, the sandbox key and token), for leak checks. */
  secretValues: string[];
  /** model-sim's recordings (`GET /_sim/requests`), oldest first. */
  requests(): Promise<RecordedRequest[]>;
  /** Kills the Orchestrator at once (SIGKILL / container kill), leaving its data. */
  killOrchestrator(): Promise<void>;
  /** Starts the Orchestrator again on the same port and data folder; resolves once it is ready. */
  startOrchestrator(extraEnv?: Record<string, string>): Promise<void>;
  /**
   * Starts one more Harness (same models and tokens) that reaches the Orchestrator at
   * `orchestratorUrl` — e.g. a stand-in for an older Orchestrator (§7.6 skew).
   */
  startHarness(orchestratorUrl: string): Promise<{ url: string; stop(): Promise<void> }>;
  /** Kills the instance Harness at once (SIGKILL / container kill): every conversation it held is gone. */
  killHarness(): Promise<void>;
  /**
   * Starts the instance Harness again on the same port, models and tokens; resolves once it is
   * ready. It holds no conversation: it answers 404 for the earlier ones (§7.1).
   */
  restartHarness(): Promise<void>;
  /** The Orchestrator's output so far (for failure messages). */
  orchestratorLog(): string;
  /** The instance Harness's output so far, every process or container of it (e.g. to prove no secret is logged). */
  harnessLog(): string;
  close(): Promise<void>;
}

/** The part of a `Stack` a target provides (the two services), and how to stop them all. */
export type Services = Pick<
  Stack,
  | "killOrchestrator"
  | "startOrchestrator"
  | "orchestratorLog"
  | "harnessLog"
  | "startHarness"
  | "killHarness"
  | "restartHarness"
> & {
  stopAll(): Promise<void>;
};
