/**
 * A strict reader of Prometheus text exposition 0.0.4 — what `/metrics` answers — for tests
 * and tools that check a scrape (issue 11 "Done when": `/metrics` parses and its counters
 * match the run). Not a general parser: no timestamps are expected (prom-client writes none).
 */

/** One sample line: `name{label="value",…} value`. */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A scrape read: samples in order, and each family's `# TYPE`. */
export interface PrometheusScrape {
  samples: PrometheusSample[];
  types: Record<string, string>;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+-?\\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/y;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

/**
 * Reads a scrape.
 * @throws Error naming the first line that is not Prometheus text (with its number)
 */
export function parsePrometheusText(text: string): PrometheusScrape {
  const samples: PrometheusSample[] = [];
  const types: Record<string, string> = {};
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const bad = (why: string) =>
      new Error(`line ${i + 1} is not Prometheus text (${why}): ${line.slice(0, 200)}`);
    if (line.startsWith("#")) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) {
        if (!TYPES.has(type[2]!)) throw bad(`unknown type ${type[2]}`);
        types[type[1]!] = type[2]!;
      } else if (!/^# HELP \S+/.test(line) && !/^#( |$)/.test(line)) throw bad("comment");
      return;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw bad("sample");
    const labels: Record<string, string> = {};
    const body = m[2] ?? "";
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const at = LABEL.lastIndex;
      const l = LABEL.exec(body);
      if (!l || l.index !== at) throw bad("labels");
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    const value = Number(m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : m[3]);
    if (Number.isNaN(value) && m[3] !== "NaN") throw bad("value");
    samples.push({ name: m[1]!, labels, value });
  });
  return { samples, types };
}

/** The sum of the samples of `name` whose labels include `match` (0 when none). */
export function sampleSum(
  scrape: PrometheusScrape,
  name: string,
  match: Record<string, string> = {},
): number {
  return scrape.samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
