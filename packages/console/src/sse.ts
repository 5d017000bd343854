/**
 * Live streams (ADR-0450): read with `fetch()` and eventsource-parser so the bearer travels in
 * a header — the browser's `EventSource` cannot send one, and a token in a URL is refused.
 * Reconnects after a cut with `Last-Event-ID` / the last seen id, waiting 1 s, 2 s, … 10 s.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { apiHeaders } from "./api.js";

/** Options of {@link followStream}. */
export interface StreamOptions {
  /** Each message (`event`, `data`, `id`) in order. */
  onMessage(message: EventSourceMessage): void;
  /** The server refused (status) or the stream ended; the stream is retried unless `stop` was called. */
  onState?(state: "open" | "retrying" | "refused" | "ended", detail?: string): void;
  /** True for the message after which the stream is complete (a run's final status): no reconnect. */
  isLast?(message: EventSourceMessage): boolean;
}

/**
 * Follows the SSE stream at `path` until the returned stop function is called. A 4xx answer
 * stops following (reported as `refused`), so does the message `isLast` names (`ended`); a cut or
 * a 5xx is retried.
 */
export function followStream(path: string, options: StreamOptions): () => void {
  const abort = new AbortController();
  let lastId: string | undefined;
  let wait = 1000;
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        const response = await fetch(path, {
          headers: apiHeaders({
            accept: "text/event-stream",
            ...(lastId ? { "last-event-id": lastId } : {}),
          }),
          signal: abort.signal,
        });
        if (response.status >= 400 && response.status < 500) {
          options.onState?.("refused", `${response.status}`);
          return;
        }
        if (!response.ok || !response.body) throw new Error(`${response.status}`);
        options.onState?.("open");
        wait = 1000;
        let complete = false;
        const parser = createParser({
          onEvent: (message) => {
            if (message.id) lastId = message.id;
            options.onMessage(message);
            if (options.isLast?.(message)) complete = true;
          },
        });
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
        if (complete) {
          options.onState?.("ended");
          return;
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        options.onState?.("retrying", String(error));
      }
      if (abort.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 10_000);
    }
  };
  void run();
  return () => abort.abort();
}
