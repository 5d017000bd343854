/**
 * `kvTokens: "auto"` (issue 30 §1, opt-in, UNMEASURED on a real vLLM): what vLLM's Prometheus
 * `/metrics` says of its KV cache — `vllm:cache_config_info{block_size="16",num_gpu_blocks="N",…}`
 * gives the budget (N × block size tokens), `vllm:num_preemptions_total` the preemptions so far,
 * `vllm:kv_cache_usage_perc` the fraction in use. Parsed from the text exposition format; a
 * label or metric missing reads as `undefined`.
 * @see docs/adr/0430-kv-scheduling.md
 */
export interface VllmKvMetrics {
  budgetTokens: number | undefined;
  preemptions: number | undefined;
  usage: number | undefined;
}

/** Parses vLLM's `/metrics` text. Sums a counter over its label sets (one per model name). */
export function parseVllmMetrics(text: string): VllmKvMetrics {
  let budgetTokens: number | undefined;
  let preemptions: number | undefined;
  let usage: number | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    if (line.startsWith("vllm:cache_config_info")) {
      const blocks = /num_gpu_blocks="(\d+)"/.exec(line)?.[1];
      const size = /block_size="(\d+)"/.exec(line)?.[1];
      if (blocks && size) budgetTokens = Number(blocks) * Number(size);
    } else if (line.startsWith("vllm:num_preemptions_total")) {
      preemptions = (preemptions ?? 0) + Number(line.split(/\s+/).at(-1));
    } else if (line.startsWith("vllm:kv_cache_usage_perc")) {
      usage = Number(line.split(/\s+/).at(-1));
    }
  }
  return { budgetTokens, preemptions, usage };
}

/** The `/metrics` URL of an OpenAI-compatible base URL (`http://h:8000/v1` → `http://h:8000/metrics`). */
export function metricsUrl(baseUrl: string): string {
  const u = new URL(baseUrl);
  u.pathname = u.pathname.replace(/\/v1\/?$/, "/").replace(/\/?$/, "/") + "metrics";
  return u.toString().replace(/\/\/metrics$/, "/metrics");
}
