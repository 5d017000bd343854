/**
 * Prompt vs cached tokens per model request across a run (issue 12) — the picture of what jr2
 * exists for: the cached share should climb with every request of a conversation. One point per
 * recorded `usage` feed event, in order; a count the provider did not report is a gap (unknown),
 * never 0. uPlot draws on a canvas and sets sizes through the CSSOM (no <style>, no eval).
 */
import type { RunFeedEvent } from "@jr2/wire";
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

type Usage = Extract<RunFeedEvent, { type: "usage" }>;

/** The chart's columns: request number (1…n), prompt tokens, cached tokens (null = unknown). */
export function usageColumns(usage: readonly Usage[]): [number[], (number | null)[], (number | null)[]] {
  return [usage.map((_, i) => i + 1), usage.map((u) => u.promptTokens), usage.map((u) => u.cachedTokens)];
}

export function UsageChart({ usage }: { usage: readonly Usage[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current || usage.length === 0) return;
    const plot = new uPlot(
      {
        width: Math.min(900, box.current.clientWidth || 700),
        height: 220,
        scales: { x: { time: false } },
        // Whole request numbers only on the x axis.
        axes: [
          { label: "model request", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500] },
          { label: "tokens", size: 60 },
        ],
        series: [
          { label: "request" },
          { label: "prompt tokens", stroke: "#3b6fd4", width: 2, points: { show: true } },
          { label: "cached tokens", stroke: "#1f9d55", width: 2, points: { show: true } },
        ],
      },
      usageColumns(usage) as uPlot.AlignedData,
      box.current,
    );
    return () => plot.destroy();
  }, [usage]);
  if (usage.length === 0) return <p className="muted">No model request recorded yet.</p>;
  return <div ref={box} className="usage-chart" data-points={usage.length} />;
}
