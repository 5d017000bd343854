import { Gauge, Histogram, type Registry } from "prom-client";

/** One scheduled endpoint at a scrape, named by a model entry (never its URL). */
export interface KvQueueRow {
  model: string;
  members: number;
  waiting: number;
  usedTokens: number;
  budgetTokens: number;
}

/**
 * The Harness's KV-scheduling families (issue 30 §2, ADR-0430), read at each scrape:
 * `jr2_kv_queue_waiting{model}`, `jr2_kv_queue_members{model}`, `jr2_kv_queue_used_tokens{model}`,
 * `jr2_kv_queue_budget_tokens{model}` (gauges) and `jr2_kv_queue_wait_seconds{model}` (a
 * histogram of the waits granted since the last scrape, 0.1 s to 30 min).
 */
export function registerKvQueueMetrics(
  registry: Registry,
  rows: () => KvQueueRow[],
  waits: () => Array<{ model: string; seconds: number }>,
): void {
  const gauge = (name: string, help: string, field: Exclude<keyof KvQueueRow, "model">) =>
    new Gauge<"model">({
      name,
      help,
      labelNames: ["model"],
      registers: [registry],
      collect() {
        this.reset();
        for (const r of rows()) this.set({ model: r.model }, r[field]);
      },
    });
  gauge(
    "jr2_kv_queue_waiting",
    "Model requests waiting for their conversation's place in the KV working set.",
    "waiting",
  );
  gauge("jr2_kv_queue_members", "Conversations in the endpoint's KV working set.", "members");
  gauge(
    "jr2_kv_queue_used_tokens",
    "Estimated KV tokens the working set's conversations hold.",
    "usedTokens",
  );
  gauge(
    "jr2_kv_queue_budget_tokens",
    "The working set's KV budget now (AIMD-adapted), tokens.",
    "budgetTokens",
  );
  new Histogram<"model">({
    name: "jr2_kv_queue_wait_seconds",
    help: "How long a model request waited for its conversation's place in the KV working set.",
    labelNames: ["model"],
    buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800],
    registers: [registry],
    collect() {
      for (const w of waits()) this.observe({ model: w.model }, w.seconds);
    },
  });
}
