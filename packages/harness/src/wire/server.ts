import { randomUUID } from "node:crypto";
import {
  boundConnections,
  DEFAULT_HTTP_EDGE_LIMITS,
  HARNESS_HTTP_EDGE_ENV,
  type HttpEdgeLimits,
  httpEdgeServerOptions,
} from "@jr2/http-edge";
import type { EgressResolver } from "@jr2/sandbox";
import { metricsRoute, type Tracing } from "@jr2/telemetry";
import Fastify, { type FastifyInstance } from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { Logger } from "pino";
import { z } from "zod";
import {
  type Conversations,
  createConversations,
  DEFAULT_CONVERSATION_TTL_MS,
} from "../conversations/conversations.js";
import { settleInterrupted } from "../conversations/durable-conversation.js";
import { openHarnessStore } from "../conversations/store/sqlite-harness-store.js";
import { harnessStoreFailing } from "../conversations/store/store-failing.js";
import { createOrchestratorClient } from "../orchestrator/orchestrator-client.js";
import { createRunStateClient } from "../orchestrator/run-state-client.js";
import { createEndpointLimiter } from "../provider/limiter.js";
import type { ModelTable } from "../provider/models.js";
import { createKvScheduling } from "../provider/scheduling/kv-scheduling.js";
import type { WorkingSetStore } from "../provider/scheduling/working-set-store.js";
import { createHarnessTelemetry } from "../telemetry/harness-telemetry.js";
import type { McpTimeouts } from "../tools/mcp/mcp-session.js";
import type { McpSnapshotStore } from "../tools/mcp/snapshot-store.js";
import { createEgressProxies } from "../tools/sandbox/egress-proxies.js";
import type { WorkingSandbox } from "../tools/sandbox/working-sandbox.js";
import { createRedactor } from "../tools/secret-redaction.js";
import { harnessSecretValues } from "../tools/working-environment.js";
import { createTurnWorkspace } from "../workspace/turn-workspace.js";
import { readWorkspaceConfig } from "../workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../workspace/workspaces.js";
import { startWorktreeSweeper } from "../workspace/worktree-sweeper.js";
import { durableMcpSnapshots, durableWorkingSets, durableWorkspaceRegistry } from "./durable-ports.js";
import { escapedLogLine } from "./log-text.js";
import { conversationRoutes } from "./routes/conversations.js";
import { frameworkErrors, registerErrorHandler } from "./routes/errors.js";
import { modelRoutes } from "./routes/models.js";
import { workspaceRoutes } from "./routes/workspaces.js";

/** The Harness's version, answered on /healthz. */
export const HARNESS_VERSION = "0.1.0";

/** Everything the Harness is built from; only main.ts reads env. */
export interface HarnessOptions {
  models: ModelTable;
  /** The Orchestrator's base URL, or a comma-separated list to fail over along (ADR-0280). */
  orchestratorUrl: string;
  /** The bearer the Orchestrator presents (§4.4). Must not be empty. */
  harnessToken: string;
  /** The sandbox token presented to the Orchestrator. */
  sandboxToken: string;
  logger?: Logger | boolean;
  fetch?: typeof globalThis.fetch;
  /** Concurrent model requests per endpoint (default 4). */
  endpointConcurrency?: number;
  /** Surface-read budget before the model (ms, default 90 000). */
  surfaceBudgetMs?: number;
  /** Bounded boundary read (ms, default 5 000). */
  boundaryReadMs?: number;
  /** Pick re-send budget (ms, default 90 000). */
  pickBudgetMs?: number;
  /** Step budget per Submission (default 256). */
  maxSteps?: number;
  /** Per model request (ms, default 600 000). */
  requestTimeoutMs?: number;
  /** A settled conversation idle this long is forgotten (ms, default 24 h); it then answers 404. */
  conversationTtlMs?: number;
  /** Timeouts and the connection bound of the HTTP edge (ADR-0156); default {@link DEFAULT_HTTP_EDGE_LIMITS}. */
  httpEdge?: HttpEdgeLimits;
  /** Conversations never forgotten for idleness, the most recently touched (default 200, ADR-0261). */
  conversationsKept?: number;
  /**
   * The environment the process started with (main.ts passes `process.env`; the default): the
   * values of its secret-named variables are redacted from Working-tool results (ADR-0158).
   */
  environment?: NodeJS.ProcessEnv;
  /** Spans of Submissions and model requests (`startTracing`, ADR-0420); default off. The caller shuts it down. */
  tracing?: Tracing;
  /**
   * The Working tools' sandbox, decided at start (`decideSandbox`, ADR-0173); main.ts always
   * passes one. Absent: Working tools run unsandboxed as before issue 26 (library and tests).
   */
  sandbox?: WorkingSandbox;
  /** How the runs' egress proxies resolve a host (default: the system resolver); tests only. */
  egressResolve?: EgressResolver;
  /** A KV working set's member idle this long leaves it (ms, default 30 000; `JR2_KV_IDLE_LEAVE_MS`). */
  kvIdleLeaveMs?: number;
  /** Where KV working sets are kept across a restart (default: the durable store's records, ./durable-ports.ts). */
  workingSetStore?: WorkingSetStore;
  /**
   * Where conversations' MCP snapshots are kept (issue 29); default the durable store's
   * `harness_records` (kind `mcp-snapshot`, ./durable-ports.ts).
   */
  mcpSnapshots?: McpSnapshotStore;
  /** Bounds of the MCP client (ms); tests lower them. */
  mcpTimeouts?: Partial<McpTimeouts>;
  /** `JR2_METRICS_TOKEN`: the bearer `GET /metrics` requires; `undefined` leaves it open like /healthz. */
  metricsToken?: string;
  /**
   * The Harness's git (issue 28): Repo Slots under the work root. Absent: built from the
   * environment (`readWorkspaceConfig(environment)`) with the in-memory registry.
   */
  workspaces?: Workspaces;
  /**
   * Run the Worktree clean-up (issue 28 §6): hourly, removes the Worktrees of runs the
   * Orchestrator says are deleted or settled past `JR2_WORKTREE_KEEP`. main.ts turns it on;
   * default off (tests and library use).
   */
  worktreeSweep?: boolean;
  /**
   * `JR2_HARNESS_DATA_DIR`: where the Harness keeps its durable state (issue 27, ADR-0175), so
   * conversations survive a restart; `:memory:` (the default for a library user and tests)
   * keeps it in memory, lost with the process. No run's working directory may contain it.
   */
  dataDir?: string;
}

/**
 * Request body limit (bytes): a Submission carries the Orchestrator's run input (≤ 1 MiB there)
 * rendered into its prompt, plus instructions and notices — 8 MiB leaves that headroom.
 */
export const HARNESS_BODY_LIMIT = 8 * 1024 * 1024;

/** Longest path parameter (an encoded iid); the Orchestrator's router allows 2048. */
export const HARNESS_MAX_PARAM_LENGTH = 4096;

/**
 * An endpoint as /healthz may show it (it is unauthenticated): scheme, host and path only —
 * no user info, query or fragment, where keys live.
 */
export function redactEndpoint(baseUrl: string): string {
  try {
    const u = new URL(baseUrl);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(unparseable endpoint)";
  }
}

/**
 * Builds the Harness (§7): an unstarted Fastify app. `app.conversations` is decorated for tests.
 * @throws Error when `harnessToken` is empty.
 * @example const app = buildHarness({ models, orchestratorUrl, harnessToken, sandboxToken }); await app.listen({ port: 0 });
 * @see SPEC §7
 */
export function buildHarness(opts: HarnessOptions): FastifyInstance & { conversations: Conversations } {
  if (!opts.harnessToken) throw new Error("buildHarness: harnessToken must not be empty");
  const edge = opts.httpEdge ?? DEFAULT_HTTP_EDGE_LIMITS;
  // Long-polls wait up to a minute: on close, cut them (the Orchestrator reconnects) rather than wait.
  const app = Fastify({
    logger: opts.logger ?? false,
    forceCloseConnections: true,
    // Slow clients are cut, a garbage request line or oversized headers answer coded (ADR-0156).
    ...httpEdgeServerOptions(edge),
    bodyLimit: HARNESS_BODY_LIMIT,
    routerOptions: { maxParamLength: HARNESS_MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrors(HARNESS_MAX_PARAM_LENGTH),
  }).withTypeProvider<ZodTypeProvider>();
  boundConnections(app.server, edge, app.log, HARNESS_HTTP_EDGE_ENV);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app, HARNESS_BODY_LIMIT);
  // The wire is JSON only (§7.1): a text body answers 415, not a schema error about a string.
  app.removeContentTypeParser("text/plain");
  const limiter = createEndpointLimiter(opts.endpointConcurrency ?? 4);
  // KV scheduling per model endpoint (issue 30): on for entries with kvTokens, said at start.
  const dataDir = opts.dataDir ?? ":memory:";
  const store = openHarnessStore(dataDir, {
    warn: (msg, fields) => app.log.warn(fields, msg),
    // Said once per failing spell, naming the path and the fix (ADR-0177).
    onFailing: (f) =>
      app.log.error(
        { path: store.path, detail: f.detail },
        `the Harness store at ${store.path} cannot commit (${f.detail}): new Submissions answer 503 JR2_ERR_HARNESS_STORE_FAILING until it can; free space in JR2_HARNESS_DATA_DIR`,
      ),
    onRecovered: (f) =>
      app.log.warn(
        { path: store.path, failingMs: Date.now() - f.since },
        "the Harness store commits again: admitting Submissions",
      ),
  });
  const kv = createKvScheduling({
    models: opts.models,
    notice: (msg, fields) => app.log.info(fields ?? {}, msg),
    // The working sets survive a restart in the durable store (issue 27) unless a test passes its own.
    store: opts.workingSetStore ?? durableWorkingSets(store),
    ...(opts.kvIdleLeaveMs === undefined ? {} : { idleLeaveMs: opts.kvIdleLeaveMs }),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const { telemetry, metrics } = createHarnessTelemetry({
    tracing: opts.tracing,
    models: opts.models,
    limiter,
    kv,
  });
  const workspaces =
    opts.workspaces ??
    createWorkspaces(readWorkspaceConfig(opts.environment ?? process.env), {
      registry: durableWorkspaceRegistry(store),
      warn: (msg, fields) => app.log.warn(fields ?? {}, msg),
    });
  // The Submissions that died with the last process settle now: their Turns are admitted again (§5.6).
  const interrupted = settleInterrupted(store);
  if (interrupted > 0)
    app.log.warn(
      { submissions: interrupted, dataDir },
      "settled the Submissions the restart cut: harness-restarted",
    );
  const conversations = createConversations({
    store,
    workspaces: createTurnWorkspace(workspaces),
    telemetry,
    orchestrator: createOrchestratorClient({
      url: opts.orchestratorUrl,
      token: opts.sandboxToken,
      fetch: opts.fetch ?? globalThis.fetch.bind(globalThis),
      pickBudgetMs: opts.pickBudgetMs ?? 90_000,
    }),
    models: opts.models,
    limiter,
    kv,
    surfaceBudgetMs: opts.surfaceBudgetMs ?? 90_000,
    boundaryReadMs: opts.boundaryReadMs ?? 5_000,
    maxSteps: opts.maxSteps ?? 256,
    requestTimeoutMs: opts.requestTimeoutMs ?? 600_000,
    secrets: createRedactor(
      harnessSecretValues({
        harnessToken: opts.harnessToken,
        sandboxToken: opts.sandboxToken,
        models: opts.models,
        environment: opts.environment ?? process.env,
      }),
    ),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    egress: createEgressProxies(opts.egressResolve),
    mcp: {
      store: opts.mcpSnapshots ?? durableMcpSnapshots(store),
      environment: opts.environment ?? process.env,
      ...(opts.mcpTimeouts ? { timeouts: opts.mcpTimeouts } : {}),
    },
    // Model-written text in a log line is escaped as the CLI prints it (issue 25 §7).
    log: (msg, fields) => app.log.info(...escapedLogLine(msg, fields)),
    warn: (msg, fields) => app.log.warn(...escapedLogLine(msg, fields)),
    error: (msg, fields) => app.log.error(...escapedLogLine(msg, fields)),
    ttlMs: opts.conversationTtlMs ?? DEFAULT_CONVERSATION_TTL_MS,
    ...(opts.conversationsKept === undefined ? {} : { kept: opts.conversationsKept }),
  });
  app.decorate("conversations", conversations);
  if (opts.worktreeSweep) {
    const stopSweep = startWorktreeSweeper({
      workspaces,
      runState: createRunStateClient({
        url: opts.orchestratorUrl,
        token: opts.sandboxToken,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      }),
      keepMs: workspaces.config.worktreeKeepMs,
      everyMs: workspaces.config.worktreeSweepMs,
      log: (msg, fields) => app.log.info(fields ?? {}, msg),
    });
    app.addHook("onClose", async () => stopSweep());
  }
  // One hook, in order: what writes to the store (KV working sets, conversations) before it closes.
  app.addHook("onClose", async () => {
    kv.close();
    conversations.close();
    try {
      store.close();
    } catch (err) {
      app.log.error({ err, path: store.path }, "the Harness store could not commit its last writes at close");
    }
  });
  // Random per process: a peer that sees a new bootId knows this Harness restarted (issue 16).
  const bootId = randomUUID();
  app.get(
    "/healthz",
    {
      schema: {
        response: {
          200: z.object({
            ok: z.boolean(),
            version: z.string(),
            bootId: z.string(),
            endpoints: z.record(z.string(), z.object({ running: z.number(), queued: z.number() })),
            /** Present while the store refuses writes (ADR-0177); the Harness stays up (200). */
            store: z
              .object({ failing: z.literal(true), code: z.string(), error: z.string(), since: z.string() })
              .optional(),
          }),
        },
      },
    },
    async () => {
      const failure = store.failing();
      return {
        ok: true,
        version: HARNESS_VERSION,
        bootId,
        endpoints: redactedDepth(limiter.depth()),
        ...(failure
          ? {
              store: {
                failing: true as const,
                code: "JR2_ERR_HARNESS_STORE_FAILING",
                error: harnessStoreFailing(store, failure.detail).message,
                since: new Date(failure.since).toISOString(),
              },
            }
          : {}),
      };
    },
  );
  // Open like /healthz unless JR2_METRICS_TOKEN is set; never behind the Harness's bearer (ADR-0420).
  app.register(metricsRoute, { metrics, token: opts.metricsToken });
  app.register(conversationRoutes, {
    conversations,
    models: opts.models,
    token: opts.harnessToken,
    version: HARNESS_VERSION,
    bootId,
    ...(dataDir === ":memory:" ? {} : { dataDir }),
  });
  app.register(modelRoutes, { models: opts.models, token: opts.harnessToken });
  app.register(workspaceRoutes, { workspaces, token: opts.harnessToken });
  return app as unknown as FastifyInstance & { conversations: Conversations };
}

/** The limiter's depth keyed by redacted endpoint; endpoints that redact alike are summed. */
function redactedDepth(depth: Record<string, { running: number; queued: number }>) {
  const out: Record<string, { running: number; queued: number }> = {};
  for (const [endpoint, d] of Object.entries(depth)) {
    const key = redactEndpoint(endpoint);
    const prev = out[key] ?? { running: 0, queued: 0 };
    out[key] = { running: prev.running + d.running, queued: prev.queued + d.queued };
  }
  return out;
}
