import { type Logger, type LoggerOptions, pino } from "pino";

/**
 * Paths pino blanks wherever they appear: no token or key is ever logged (§4.4). Fastify's
 * request serializer logs no headers; this covers a header or config object logged by hand.
 */
export const REDACTED_PATHS = [
  "req.headers.authorization",
  "headers.authorization",
  "authorization",
  "token",
  "instanceToken",
  "sandboxKey",
  "harnessToken",
  "*.token",
  "*.instanceToken",
  "*.sandboxKey",
  "*.harnessToken",
];

/**
 * The Orchestrator's pino logger (also Fastify's): JSON lines on stdout, `level` from the
 * caller (`JR2_LOG_LEVEL`, default `info`), secrets redacted.
 * @see SPEC §2 (pino), §4.4
 */
export function createLogger(options: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  const config: LoggerOptions = {
    level: options.level ?? "info",
    base: { service: "jr2-orchestrator" },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}
