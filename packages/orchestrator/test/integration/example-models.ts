/**
 * The model table the integration tests run the example workflows on: model-sim policies that
 * take `review` through one fix request to `done`, and `triage` by the obedient policy.
 */
import type { ModelEntry } from "../../../conformance/src/index.js";

const entry = (baseUrl: string, id: string): ModelEntry => ({
  baseUrl,
  id,
  contextWindow: 32768,
  maxTokens: 1024,
});

/** `review`'s coder and reviewer on model-sim at `baseUrl`. */
export const reviewModels = (baseUrl: string) => ({
  coder: entry(baseUrl, "worker:1"),
  reviewer: entry(baseUrl, "script:request_changes,approve"),
});

/** Both example workflows' models on model-sim at `baseUrl`. */
export const exampleModels = (baseUrl: string) => ({
  ...reviewModels(baseUrl),
  triager: entry(baseUrl, "obedient"),
});
