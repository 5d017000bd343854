import { secretProblem } from "@jr2/wire";

/**
 * What the telemetry of a service reads from its environment (ADR-0420). Pure: each function
 * takes the environment as an argument; only a service's main passes `process.env`.
 */

/** An environment as read here (a subset of `process.env`). */
export type TelemetryEnv = Readonly<Record<string, string | undefined>>;

/** Where and how spans are exported; `url` undefined: tracing is off. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (`…/v1/traces`), or `undefined` when tracing is off. */
  url: string | undefined;
  /** Headers sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`, e.g. a collector's key). */
  headers: Record<string, string>;
  /** `JR2_OTEL_CAPTURE_CONTENT=true`: spans may carry message content, arguments and iids. */
  captureContent: boolean;
}

const set = (v: string | undefined): string | undefined =>
  v === undefined || v.trim() === "" ? undefined : v.trim();

/**
 * Reads the tracing settings. On when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full traces
 * URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL; `/v1/traces` is appended, as the OTLP
 * spec says) is set; off when neither is, or when `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`. Headers: `OTEL_EXPORTER_OTLP_TRACES_HEADERS` or
 * `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values URL-encoded).
 * @throws Error when an endpoint is set but is not an http(s) URL (naming the variable)
 */
export function readTracingSettings(env: TelemetryEnv): TracingSettings {
  const captureContent = env.JR2_OTEL_CAPTURE_CONTENT?.trim().toLowerCase() === "true";
  const off =
    env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true" ||
    env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none";
  const full = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const base = set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const headers = parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS);
  if (off || (full === undefined && base === undefined)) return { url: undefined, headers, captureContent };
  const url = full ?? `${base!.replace(/\/+$/, "")}/v1/traces`;
  const variable = full ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
    throw new Error(
      `${variable} must be an http:// or https:// URL of an OTLP/HTTP collector (e.g. http://127.0.0.1:4318), got \`${full ?? base}\``,
    );
  return { url, headers, captureContent };
}

/** `k=v,k2=v2` (values URL-encoded) as a header object; malformed pairs are skipped. */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    let value = pair.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // Kept as written: a `%` that is not an escape is the operator's own character.
    }
    if (key) out[key] = value;
  }
  return out;
}

/**
 * `JR2_METRICS_TOKEN`: unset or blank → `undefined` (`/metrics` is open, like `/healthz`);
 * otherwise the bearer `/metrics` requires, held to the same rule as every jr2 secret
 * (≥ 16 characters, no placeholder).
 * @throws Error naming the variable and how to make a good value
 */
export function readMetricsToken(env: TelemetryEnv): string | undefined {
  const raw = set(env.JR2_METRICS_TOKEN);
  if (raw === undefined) return undefined;
  const problem = secretProblem("JR2_METRICS_TOKEN", raw);
  if (problem) throw new Error(problem);
  return raw;
}
