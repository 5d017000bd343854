import { z } from "zod";
import { httpErrorCodes } from "./error-codes-http.js";
import type { ErrorCodeSpec } from "./error-spec.js";

export type { ErrorCodeSpec } from "./error-spec.js";

/**
 * Every error code any jr2 service answers with, `JR2_ERR_<AREA>_<WHAT>`.
 * `docs/reference/errors.md` lists the same table; a test keeps both in step.
 * @see SPEC §4 (error bodies), §6, §7.1
 */
export const errorCodes = {
  ...httpErrorCodes,
  // Workflows and runs (§4.1)
  JR2_ERR_WORKFLOW_NOT_FOUND: { status: 404, message: "no workflow `{workflow}`; known workflows: {known}" },
  JR2_ERR_RUN_INPUT_INVALID: { status: 400, message: "input for workflow `{workflow}` is invalid: {detail}" },
  JR2_ERR_RUN_NOT_FOUND: { status: 404, message: "no run `{runId}`" },
  JR2_ERR_RUN_NOT_LIVE: { status: 409, message: "run `{runId}` is {status}, not live" },
  /**
   * Several instances share one store (issue 15, ADR-0280): the run's owner cannot answer now —
   * its lease expired and no survivor adopted the run yet, it cannot be reached, or this
   * instance received a forwarded request for a run it does not host. Sent with `Retry-After`
   * (seconds, also `retryAfter`); the same request re-sent then (to any instance) is decided afresh.
   */
  JR2_ERR_RUN_MOVING: {
    status: 503,
    message: "run `{runId}` is moving between instances: {detail}; retry in {retryAfter} s",
  },
  /**
   * The run's lease row names a URL this instance does not know as a peer (ADR-0281): not in
   * `JR2_PEERS`, and it did not prove it holds `JR2_PEER_KEY`. Nothing was sent to it.
   */
  JR2_ERR_PEER_UNKNOWN: {
    status: 503,
    message:
      "run `{runId}` is leased to `{owner}` at {url}, which is not a known peer ({detail}): nothing was sent there; list it in JR2_PEERS or give it this cluster's JR2_PEER_KEY; retry in {retryAfter} s",
  },
  /** An `Idempotency-Key` on a run start that cannot be one (ADR-0282). */
  JR2_ERR_IDEMPOTENCY_KEY_INVALID: {
    status: 400,
    message: "the Idempotency-Key header {detail}; send 1–255 visible ASCII characters (a UUID, say)",
  },
  /**
   * An `Idempotency-Key` that names another workflow's run, or a start still under way after
   * 10 s (then with `retryAfter`): the key is not reused for a new run within 24 h (ADR-0282).
   */
  JR2_ERR_IDEMPOTENCY_KEY_CONFLICT: {
    status: 409,
    message: "the Idempotency-Key already names {detail}; retry later, or send a new key for a new run",
  },
  JR2_ERR_RUN_TURN_NOT_FOUND: {
    status: 404,
    message: "run `{runId}` has no Turn `{turnId}`; `GET /runs/{runId}/turns` lists its Turns",
  },
  // Resume and retry (issue 13, ADR-0271)
  JR2_ERR_RUN_NOT_DRIFTED: {
    status: 409,
    message: "run `{runId}` is {status}, not drifted; only a drifted run is resumed",
  },
  /**
   * An operator's change lost a race (issue 22): the run's status is no longer the one the
   * request was made against — `change` names the winner's action (`resumed by cli at …`).
   */
  JR2_ERR_RUN_STATUS_CHANGED: {
    status: 409,
    message:
      "run `{runId}` is {status} now, not {expected}: {change}; look at it (`jr2 show {runId}`) before acting again",
  },
  JR2_ERR_RUN_RESUME_STATES_MISSING: {
    status: 409,
    message:
      "run `{runId}` cannot resume: the served Machine of `{workflow}` has no {missing}; serve a workflow that has them, or start a new run",
  },
  JR2_ERR_RUN_NOT_RETRYABLE: {
    status: 409,
    message: "run `{runId}` has nothing to retry: {why}",
  },
  JR2_ERR_RUN_RETRY_UNCONFIRMED: {
    status: 409,
    message:
      'run `{runId}` was faulted by its Machine ({reason}); a retry would {plan} — nothing changed: confirm with `jr2 retry {runId} --yes` (body `{"confirm": true}`)',
  },
  // A run's history and forks (ADR-0270)
  JR2_ERR_RUN_VERSION_NOT_FOUND: {
    status: 404,
    message:
      "run `{runId}` has no version {version}; kept versions: {kept} (`jr2 history {runId}` or `GET /runs/{runId}/history` lists them)",
  },
  JR2_ERR_FORK_DRIFTED: {
    status: 409,
    message:
      "cannot fork run `{runId}` at version {version}: {reason}; fork a version saved by the Machine served now, or serve the workflow as it was",
  },
  JR2_ERR_FORK_CONTEXT_INVALID: {
    status: 400,
    message: "the context patch does not fit run `{runId}` at version {version}: {detail}",
  },
  // Gates (§6)
  JR2_ERR_GATE_NOT_FOUND: {
    status: 404,
    message: "run `{runId}` has no open Gate `{gateId}`; open Gates: {open}",
  },
  JR2_ERR_GATE_EVENT_NOT_ACCEPTED: {
    status: 400,
    message: "Gate `{gateId}` does not accept `{type}`; it accepts: {accepts}",
  },
  JR2_ERR_GATE_PAYLOAD_INVALID: { status: 400, message: "payload for `{type}` is invalid: {detail}" },
  JR2_ERR_GATE_NOT_NOW: {
    status: 409,
    message: "the run would not take `{type}` from Gate `{gateId}` now{why}; accepted now: {acceptsNow}",
  },
  // Agent routes (§4.2, §4.3)
  JR2_ERR_TURN_NOT_FOUND: {
    status: 404,
    message: "no live Turn at `{iid}` (the Turn is over, or not in this token's scope)",
  },
  // Authoring refusals at defineEvent / agent() / jr2Setup().createMachine / invoke time (§3.1, §3.2).
  // Thrown to the workflow's developer; a route answers them only when a workflow fails to load.
  JR2_ERR_SETUP_EVENT_NAME_INVALID: {
    status: 500,
    message: "event name `{name}` is not a valid tool name; use 1–64 characters of A–Z a–z 0–9 _ -",
  },
  JR2_ERR_SETUP_EVENT_NAME_RESERVED: {
    status: 500,
    message: "event name `{name}` is reserved ({reason}); choose another name",
  },
  JR2_ERR_SETUP_EVENT_INPUT_INVALID: {
    status: 500,
    message: "event `{name}`: input must be a zod object (z.object({...})), got {got}",
  },
  JR2_ERR_SETUP_EVENT_DUPLICATE: {
    status: 500,
    message: "two event defs are named `{name}`; declare each name once in jr2Setup({ events })",
  },
  JR2_ERR_SETUP_EVENT_UNKNOWN: {
    status: 500,
    message: "unknown event key `{key}` in state `{state}`; declared events: {declared}",
  },
  JR2_ERR_SETUP_AGENT_INVALID: { status: 500, message: "agent definition is invalid: {detail}" },
  JR2_ERR_SETUP_AGENT_FAULT_UNROUTED: {
    status: 500,
    message:
      'state `{state}` invokes Agent `{agent}` but neither it nor an ancestor routes `agent.fault`; add `"agent.fault": <target>` to its `on`',
  },
  JR2_ERR_SETUP_OUTCOME_INVALID: {
    status: 500,
    message:
      'final state `{state}` declares meta.outcome {got}; use "succeeded" or "failed" (or leave it out: "succeeded")',
  },
  JR2_ERR_SETUP_INVOKE_CONFLICT: {
    status: 500,
    message:
      "state `{state}` invokes {parties} together (their writings would have two owners); put each in its own parallel region",
  },
  JR2_ERR_SETUP_TURN_INPUT_KEY: {
    status: 500,
    message:
      "unknown Turn input key `{key}` for Agent `{agent}` in state `{state}`; accepted keys: {accepted}",
  },
  JR2_ERR_SETUP_TURN_INPUT_INVALID: {
    status: 500,
    message: "Turn input for Agent `{agent}` in state `{state}` is invalid: {detail}",
  },
  JR2_ERR_SETUP_INVOKE_SRC_UNKNOWN: {
    status: 500,
    message:
      "state `{state}` invokes `{src}`, which is neither a declared actor nor a built-in; declared actors: {declared}",
  },
  // Startup of a service (never an HTTP answer: the process refuses to start)
  JR2_ERR_CONFIG_INVALID: { status: 500, message: "invalid configuration: {detail}" },
  JR2_ERR_SANDBOX_NAME_INVALID: {
    status: 500,
    message: "sandbox name `{sandbox}` cannot be carried in a sandbox token: {reason}",
  },
  // The Working-tool sandbox (@jr2/sandbox, issue 26, ADR-0170)
  JR2_ERR_SANDBOX_UNAVAILABLE: {
    status: 503,
    message: "the Working-tool sandbox does not work here: {layer} ({detail}); fix: {fix}",
  },
  JR2_ERR_SANDBOX_PATH_REFUSED: {
    status: 403,
    message: "path `{path}` is refused: {reason}; use a path inside the run's directory `{root}`",
  },
  JR2_ERR_SANDBOX_EGRESS_REFUSED: {
    status: 403,
    message:
      "host `{host}` is not on this run's network allow list ({allowed}); add it to workspace(body, { network: [...] })",
  },
  JR2_ERR_WORKFLOW_LOAD_FAILED: {
    status: 500,
    message: "cannot load workflow module `{file}`: {detail}",
  },
  // Harness wire (§7.1)
  JR2_ERR_CONVERSATION_NOT_FOUND: { status: 404, message: "no conversation `{iid}` on this Harness" },
  JR2_ERR_CONVERSATION_NOT_REBUILT: {
    status: 404,
    message: "no conversation `{iid}` on this Harness, and it cannot be rebuilt: {why}",
  },
  JR2_ERR_SUBMISSION_INVALID: { status: 400, message: "invalid Submission: {detail}" },
  JR2_ERR_MODEL_UNKNOWN: { status: 400, message: "unknown model `{model}`; configured models: {known}" },
  JR2_ERR_CWD_NOT_ABSOLUTE: { status: 400, message: "cwd `{cwd}` must be an absolute path" },
  JR2_ERR_CWD_INVALID: { status: 400, message: "cwd `{cwd}` cannot be a working directory: {reason}" },
  // MCP servers on an Agent (issue 29)
  JR2_ERR_DEFINITION_KEY_UNKNOWN: {
    status: 400,
    message:
      "the Agent definition has key `{key}`, which this Harness (version {version}) does not know; its keys: {known}. Upgrade the Harness, or remove the key from the Agent",
  },
  JR2_ERR_SETUP_AGENT_MCP_INVALID: {
    status: 500,
    message: "Agent MCP server `{server}` is invalid: {detail}",
  },
  JR2_ERR_SETUP_AGENT_MCP_LITERAL_SECRET: {
    status: 500,
    message:
      'Agent MCP server `{server}` header `{header}` holds a literal value that looks like a secret ({reason}); name it instead as `{ secret: "ENV_NAME" }`, set in the Harness\'s environment',
  },
  JR2_ERR_SETUP_AGENT_MCP_SECRET_REFUSED: {
    status: 500,
    message: "Agent MCP server `{server}` may not carry that secret: {reason}",
  },
  // Repo Slots: the Harness's git (issue 28, ADR-0210)
  JR2_ERR_WORKSPACE_URL_REFUSED: {
    status: 400,
    message: "Repo Slot `{slot}`: its `{field}` `{url}` is refused by rule `{rule}`: {fix}",
  },
  JR2_ERR_WORKSPACE_NAME_INVALID: {
    status: 400,
    message:
      "Repo Slot {field} `{value}` is not usable in a path and a branch name; use letters, digits, `.`, `_` and `-`, starting with a letter or digit",
  },
  JR2_ERR_WORKSPACE_REF_UNKNOWN: {
    status: 400,
    message: "ref `{ref}` names no branch, tag or commit of `{url}`; give one the remote has",
  },
  JR2_ERR_WORKSPACE_SLOT_UNKNOWN: {
    status: 404,
    message: "no Repo Slot `{slot}` is attached on this Harness; attach it first (POST /workspaces/attach)",
  },
  JR2_ERR_WORKSPACE_LOST: {
    status: 409,
    message: "the Worktree `{path}` is gone; fork or retry the run to recreate it from the run's repository",
  },
  JR2_ERR_WORKSPACE_SYMLINK: {
    status: 409,
    message:
      "`{path}` is or lies under the symlink `{link}` (to `{target}`): jr2 never binds or runs git through a link in a run's directory (ADR-0227); remove `{link}` (a Working tool made it), then retry the run",
  },
  JR2_ERR_WORKSPACE_COMMIT_GONE: {
    status: 409,
    message:
      "commit `{commit}` is not in the repository of Repo Slot `{slot}`; fork or retry from another version",
  },
  JR2_ERR_WORKSPACE_WRITER_BUSY: {
    status: 409,
    message:
      "the Worktree `{path}` already has a live write Turn (state `{holder}`); state `{state}` must wait for it or use its own Repo Slot",
  },
  JR2_ERR_WORKSPACE_CWD_AMBIGUOUS: {
    status: 400,
    message:
      "the workspace has Repo Slots {slots}; a Turn in state `{state}` must name its cwd (one of their paths)",
  },
  JR2_ERR_WORKSPACE_HARNESS_TOO_OLD: {
    status: 500,
    message:
      "the Harness at `{harness}` (version {version}) has no Repo Slot routes; upgrade it to one that answers POST /workspaces/attach",
  },
  JR2_ERR_WORKSPACE_LOCK_TIMEOUT: {
    status: 503,
    message:
      "waited {waitedMs} ms for the lock `{lock}`; another process holds it (a long fetch or push), try again",
  },
  JR2_ERR_WORKSPACE_FETCH_FAILED: {
    status: 502,
    message: "fetching `{url}` into its mirror failed: {detail}",
  },
  JR2_ERR_WORKSPACE_PUSH_FAILED: {
    status: 502,
    message: "pushing branch `{branch}` to `{url}` failed: {detail}",
  },
  JR2_ERR_WORKSPACE_CREDENTIAL_UNREADABLE: {
    status: 500,
    message: "the git credential named by {source} cannot be read: {detail}",
  },
  JR2_ERR_WORKSPACE_GIT_FAILED: {
    status: 500,
    message: "`{command}` failed (exit {exit}): {stderr}",
  },
  JR2_ERR_WORKSPACE_SUBMODULES_REFUSED: {
    status: 400,
    message:
      'Repo Slot `{slot}` ({url} at {base}) has submodules {paths} and says `submodules: "refuse"`; jr2 never checks submodules out: vendor them into the repository, or set `submodules: "skip"` to work with them left empty',
  },
} as const satisfies Record<string, ErrorCodeSpec>;

/** A code of {@link errorCodes}. */
export type ErrorCode = keyof typeof errorCodes;

/** All codes, in table order. */
export const errorCodeList = Object.keys(errorCodes) as ErrorCode[];

/**
 * The body of every error answer: `{ error, code, ...fields }` (§4). Extra fields carry the
 * values a caller needs (`acceptsNow`, `issues`, `known`, …).
 */
export const ErrorBody = z
  .object({
    error: z.string(),
    code: z.string(),
  })
  .catchall(z.unknown());
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Fills `{name}` placeholders; arrays join with ", ", missing values stay as `{name}`. */
export function formatErrorMessage(template: string, fields: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    const value = fields[key];
    if (value === undefined) return whole;
    if (Array.isArray(value)) return value.length ? value.join(", ") : "(none)";
    return String(value);
  });
}

/**
 * A coded error a service throws and its error handler answers as {@link ErrorBody}.
 * @example throw new Jr2Error("JR2_ERR_RUN_NOT_FOUND", { runId })
 */
export class Jr2Error extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly fields: Record<string, unknown>;

  constructor(code: ErrorCode, fields: Record<string, unknown> = {}, cause?: unknown) {
    super(formatErrorMessage(errorCodes[code].message, fields), cause === undefined ? undefined : { cause });
    this.name = "Jr2Error";
    this.code = code;
    this.statusCode = errorCodes[code].status;
    this.fields = fields;
  }

  /** The wire body: `{ error, code, ...fields }`. */
  toBody(): ErrorBody {
    return { ...this.fields, error: this.message, code: this.code };
  }
}

/** Builds an error body without throwing (for places that answer directly). */
export function jr2Error(code: ErrorCode, fields: Record<string, unknown> = {}): ErrorBody {
  return new Jr2Error(code, fields).toBody();
}
