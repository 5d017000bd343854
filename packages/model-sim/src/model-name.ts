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
  | { kind: "disobedient" }
  | { kind: "inventor" }
  | { kind: "silent"; answers: number }
  | { kind: "textcall" }
  | { kind: "stringified" }
  | { kind: "truncated" }
  | { kind: "dropper" }
  | { kind: "slow"; msPerToken: number }
  | { kind: "script"; picks: string[] };

/** A parsed model name: its policy and the real chat template its prompts render with. */
export interface SimModel {
  name: string;
  policy: Policy;
  template: TemplateName;
}

/** The bare policy names, as `GET /v1/models` lists them. */
export const POLICY_NAMES = [
  "obedient",
  "worker",
  "disobedient",
  "inventor",
  "silent",
  "textcall",
  "stringified",
  "truncated",
  "dropper",
  "slow",
  "script",
] as const;

function count(arg: string | undefined, fallback: number, name: string): number {
  if (arg === undefined || arg === "") return fallback;
  if (!/^\d+$/.test(arg)) throw notFound(name, `"${arg}" is not a whole number`);
  return Number(arg);
}

function notFound(name: string, why: string): SimRequestError {
  return new SimRequestError(
    "model_not_found",
    `The model \`${name}\` does not exist in model-sim (a simulator): ${why}. ` +
      `Accepted: <policy>[:<arg>][@<template>], policy one of ${POLICY_NAMES.join(", ")}; ` +
      `template one of ${TEMPLATE_NAMES.join(", ")}.`,
    "model",
    404,
  );
}

/**
 * Parse `<policy>[:<arg>][@<template>]`, e.g. `obedient`, `worker:3`, `slow:20@llama3`,
 * `script:request_changes,approve`.
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
  const colon = base.indexOf(":");
  const kind = colon >= 0 ? base.slice(0, colon) : base;
  const arg = colon >= 0 ? base.slice(colon + 1) : undefined;
  const policy = ((): Policy => {
    switch (kind) {
      case "obedient":
      case "disobedient":
      case "inventor":
      case "textcall":
      case "stringified":
      case "truncated":
      case "dropper":
        if (arg !== undefined) throw notFound(name, `policy ${kind} takes no argument`);
        return { kind };
      case "worker":
        return { kind, steps: count(arg, 3, name) };
      case "silent":
        return { kind, answers: count(arg, Number.POSITIVE_INFINITY, name) };
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
  })();
  return { name, policy, template };
}
