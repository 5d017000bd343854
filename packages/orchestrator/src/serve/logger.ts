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
  const destination = options.destination ?? pino.destination({ dest: process.stdout.fd ?? 1, sync: false });
  survivesWriteErrors(destination);
  return pino(config, destination);
}

/**
 * A log line that cannot be written (a full disk under the log file, a closed pipe) is lost,
 * never the process: without an `error` listener the stream's error event ends it (issue 16
 * item 1). The stream goes on writing once the write succeeds again.
 */
export function survivesWriteErrors(destination: unknown): void {
  const emitter = destination as { on?: (event: string, listener: (error: unknown) => void) => unknown };
  if (typeof emitter.on === "function") emitter.on("error", () => {});
}
