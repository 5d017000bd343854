import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Sees whether a model stream carried a `finish_reason`. pi-ai treats a stream that ends
 * without one as a normal stop (§13); the Harness must call it a failure (§7.2, case C6).
 * pi-ai builds its OpenAI client per request with the global `fetch`, and offers no hook on the
 * raw chunks, so a scoped wrapper around the global `fetch` watches the bytes — only for
 * requests made inside {@link withFetchProbe}; every other fetch passes through untouched.
 * @see docs/adr/0151-pi-interception.md
 */
export interface FetchProbe {
  sawFinishReason: boolean;
}

const store = new AsyncLocalStorage<FetchProbe>();
const INSTALLED = Symbol.for("jr2.harness.fetchProbe");
const FINISH = /"finish_reason"\s*:\s*"/;

/** Installs the scoped wrapper once per process (idempotent). */
export function installFetchProbe(): void {
  const g = globalThis as unknown as Record<symbol, unknown>;
  if (g[INSTALLED]) return;
  g[INSTALLED] = true;
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const probe = store.getStore();
    const res = await original(input, init);
    if (!probe || !res.body) return res;
    const decoder = new TextDecoder();
    let tail = "";
    const watch = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!probe.sawFinishReason) {
          const text = tail + decoder.decode(chunk, { stream: true });
          if (FINISH.test(text)) probe.sawFinishReason = true;
          tail = text.slice(-64);
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(res.body.pipeThrough(watch), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

/** Runs `fn` (which starts a model request) with `probe` watching its response bytes. */
export function withFetchProbe<T>(probe: FetchProbe, fn: () => T): T {
  return store.run(probe, fn);
}
