import { TEMPLATE_NAMES, type TemplateName } from "./chat-template.js";
import { SimRequestError } from "./openai-error.js";

/**
 * How a simulated model answers, chosen by the requested model name (README "Policies").
 * Every policy decides from the request alone — model-sim keeps no conversation state.
 *
 * @see SPEC §9
 */
export type Policy =
  | { kind: "obedient" }
  | { kind: "worker"; steps: number }
  | { kind: "gitworker"; steps: number }
  | { kind: "disobedient" }
  | { kind: "stubborn" }
  | { kind: "inventor" }
  | { kind: "silent"; answers: number }
  | { kind: "textcall"; answers: number }
  | { kind: "stringified" }
  | { kind: "truncated" }
  | { kind: "slow"; msPerToken: number }
  | { kind: "script"; picks: string[] };

/**
 * The provider failures a model name adds to its policy (README "Faults"), one per class the
 * Harness must survive (issue 10 §3). Counts of failing attempts are per request body: the
 * first `n` sends of one exact body fail, the next succeeds — a retry of the same bytes is how
 * a client gets through. Absent = off.
 *
 * - `think`: reasoning tokens per answer, `[min, max]` (chosen per request from its bytes);
 * - `reasoningField`: the delta/message field reasoning is sent in (`reasoning`, vLLM ≥ 0.17);
 * - `rateLimit`: 429 with `Retry-After: seconds` for the first `attempts` sends of a body;
 * - `abort` / `cut` / `drop`: the next attempts of a body stream half their answer, then end
 *   with `finish_reason: "abort"` / have the socket destroyed / end with no finish reason;
 * - `loading`: 503 for the first `n` requests naming this model (a server still loading);
 * - `overflow`: vLLM's context-length 400 once prompt + requested output exceed this many tokens;
 * - `overlong`: the answer rambles past any `max_tokens` (cut there, `finish_reason: "length"`)
 *   while the conversation holds fewer than this many assistant messages;
 * - `noDetails`: usage without `prompt_tokens_details`; `noUsage`: no usage at all;
 * - `latency`: ms before the first byte of every answer (a real server's time to first token),
 *   so a test can act while a request is in flight.
 */
export interface Faults {
  think?: { min: number; max: number };
  reasoningField?: "reasoning" | "reasoning_content";
  rateLimit?: { attempts: number; retryAfter: number };
  abort?: number;
  cut?: number;
  drop?: number;
  /** Sends of a body that stream half their answer, then an `error` event and nothing more (issue 25 §5). */
  errorEvent?: number;
  loading?: number;
  overflow?: number;
  overlong?: number;
  noDetails?: boolean;
  noUsage?: boolean;
  /** `cached_tokens` reported at 1.5 × `prompt_tokens` (issue 25 §6). */
  overCache?: boolean;
  latency?: number;
  /** How the tool call is laid out on the stream (issue 25, call-shapes.ts). */
  callShape?: CallShape;
  /** ms between frames, a `: keep-alive` comment inside each gap (issue 25 §10, stream-pacing.ts). */
  trickle?: number;
  /** Sends of a body that send their head and first token, then nothing (issue 25 §10). */
  headSilence?: number;
}

/** How a tool call is laid out on the stream (issue 25; call-shapes.ts writes it). */
export type CallShape =
  | { kind: "dupcalls"; copies: number }
  | { kind: "sharedid" }
  | { kind: "noindex" }
  | { kind: "thinkcall" };

/** A parsed model name: its policy, its faults and the real chat template its prompts render with. */
export interface SimModel {
  name: string;
  policy: Policy;
  faults: Faults;
  template: TemplateName;
}

/** The bare policy names, as `GET /v1/models` lists them. */
export const POLICY_NAMES = [
  "obedient",
  "worker",
  "gitworker",
  "disobedient",
  "stubborn",
  "inventor",
  "silent",
  "textcall",
  "stringified",
  "truncated",
  "slow",
  "script",
] as const;

/** The fault names (alone, or after a policy with `+`), as `GET /v1/models` lists them. */
export const FAULT_NAMES = [
  "think",
  "reasoning_content",
  "ratelimit",
  "abort",
  "cut",
  "dropper",
  "loading",
  "overflow",
  "overlong",
  "nodetails",
  "nousage",
  "latency",
  "errorevent",
  "overcache",
  "dupcalls",
  "sharedid",
  "noindex",
  "thinkcall",
  "trickle",
  "headsilence",
] as const;

const ALWAYS = Number.POSITIVE_INFINITY;
/** The most reasoning tokens `think:` may ask for: each answer is generated and tokenized in memory. */
export const MAX_THINK = 65_536;

function notFound(name: string, why: string): SimRequestError {
  return new SimRequestError(
    "model_not_found",
    `The model \`${name}\` does not exist in model-sim (a simulator): ${why}. ` +
      `Accepted: <policy>[:<arg>][+<fault>[:<arg>]…][@<template>], policy one of ${POLICY_NAMES.join(", ")}; ` +
      `fault one of ${FAULT_NAMES.join(", ")}; template one of ${TEMPLATE_NAMES.join(", ")}.`,
    "model",
    404,
  );
}

function count(arg: string | undefined, fallback: number, name: string): number {
  if (arg === undefined || arg === "") return fallback;
  if (!/^\d+$/.test(arg)) throw notFound(name, `"${arg}" is not a whole number`);
  return Number(arg);
}

function parsePolicy(kind: string, arg: string | undefined, name: string): Policy {
  switch (kind) {
    case "obedient":
    case "disobedient":
    case "stubborn":
    case "inventor":
    case "stringified":
    case "truncated":
      if (arg !== undefined) throw notFound(name, `policy ${kind} takes no argument`);
      return { kind };
    case "worker":
    case "gitworker":
      return { kind, steps: count(arg, 3, name) };
    case "silent":
    case "textcall":
      return { kind, answers: count(arg, ALWAYS, name) };
    case "slow":
      return { kind, msPerToken: count(arg, 20, name) };
    case "script": {
      const picks = (arg ?? "").split(",").filter(Boolean);
      if (picks.length === 0) throw notFound(name, "script needs at least one pick: script:<pick>,<pick>");
      return { kind, picks };
    }
    default:
      throw notFound(name, `unknown policy "${kind}"`);
  }
}

/** Adds one `<fault>[:<arg>]` to `faults`; false when `kind` is no fault name. */
function addFault(faults: Faults, kind: string, arg: string | undefined, name: string): boolean {
  const flag = (key: "noDetails" | "noUsage" | "overCache") => {
    if (arg !== undefined) throw notFound(name, `fault ${kind} takes no argument`);
    faults[key] = true;
  };
  switch (kind) {
    case "think": {
      const m = /^(\d+)(?:-(\d+))?$/.exec(arg ?? "");
      if (!m) throw notFound(name, "think needs a token count: think:<n> or think:<min>-<max>");
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : Number(m[2]);
      if (max < min) throw notFound(name, `think:${arg} has its maximum below its minimum`);
      if (max > MAX_THINK) throw notFound(name, `think:${arg} is over ${MAX_THINK} tokens`);
      faults.think = { min, max };
      return true;
    }
    case "reasoning_content":
      if (arg !== undefined) throw notFound(name, "fault reasoning_content takes no argument");
      faults.reasoningField = "reasoning_content";
      return true;
    case "ratelimit": {
      const [attempts, retryAfter] = (arg ?? "").split(",");
      faults.rateLimit = { attempts: count(attempts, 1, name), retryAfter: count(retryAfter, 1, name) };
      return true;
    }
    case "abort":
    case "cut":
      faults[kind] = count(arg, 1, name);
      return true;
    case "dropper":
      faults.drop = count(arg, ALWAYS, name);
      return true;
    case "loading":
      faults.loading = count(arg, 3, name);
      return true;
    case "overflow":
      faults.overflow = count(arg, 0, name);
      return true;
    case "overlong":
      faults.overlong = count(arg, ALWAYS, name);
      return true;
    case "latency":
      faults.latency = count(arg, 500, name);
      return true;
    case "overcache":
      flag("overCache");
      return true;
    case "errorevent":
      faults.errorEvent = count(arg, 1, name);
      return true;
    case "dupcalls":
      faults.callShape = { kind: "dupcalls", copies: Math.max(2, count(arg, 4, name)) };
      return true;
    case "sharedid":
    case "noindex":
    case "thinkcall":
      if (arg !== undefined) throw notFound(name, `fault ${kind} takes no argument`);
      faults.callShape = { kind };
      return true;
    case "trickle":
      faults.trickle = Math.max(1, count(arg, 1000, name));
      return true;
    case "headsilence":
      faults.headSilence = count(arg, 1, name);
      return true;
    case "nodetails":
      flag("noDetails");
      return true;
    case "nousage":
      flag("noUsage");
      return true;
    default:
      return false;
  }
}

function split(segment: string): [string, string | undefined] {
  const colon = segment.indexOf(":");
  return colon >= 0 ? [segment.slice(0, colon), segment.slice(colon + 1)] : [segment, undefined];
}

/**
 * Parse `<policy>[:<arg>][+<fault>[:<arg>]…][@<template>]`, e.g. `obedient`, `worker:3`,
 * `slow:20@llama3`, `script:request_changes,approve`, `worker:2+think:1000-2000+abort@qwen3.6`.
 * A fault alone (`abort`, `loading:3`) is `obedient` with that fault.
 *
 * @param name - the request's `model` field.
 * @param defaultTemplate - the template when the name carries no `@<template>` suffix.
 * @throws SimRequestError `model_not_found` (404) naming the accepted forms.
 * @see SPEC §9
 */
export function parseModelName(name: string, defaultTemplate: TemplateName = "qwen3"): SimModel {
  const at = name.lastIndexOf("@");
  const base = at >= 0 ? name.slice(0, at) : name;
  const templateText = at >= 0 ? name.slice(at + 1) : defaultTemplate;
  const template = TEMPLATE_NAMES.find((t) => t === templateText);
  if (!template) throw notFound(name, `unknown template "${templateText}"`);
  const [head = "", ...rest] = base.split("+");
  const faults: Faults = {};
  const [kind, arg] = split(head);
  let policy: Policy;
  if (addFault(faults, kind, arg, name)) policy = { kind: "obedient" };
  else policy = parsePolicy(kind, arg, name);
  for (const segment of rest) {
    const [faultKind, faultArg] = split(segment);
    if (!addFault(faults, faultKind, faultArg, name)) throw notFound(name, `unknown fault "${faultKind}"`);
  }
  return { name, policy, faults, template };
}
