import { once } from "node:events";
import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * How a streamed answer is paced on the wire, for the two stream timers a client must keep
 * (issue 25 §10):
 * - `trickle:MS` — a slow but live model: every frame after the first comes MS apart, with an
 *   SSE comment line `: keep-alive` halfway through each gap (as proxies and llama-server's
 *   `--sse-keepalive` send them). A client whose idle bound is under MS keeps the stream only if
 *   it counts comments as bytes; one that bounds the whole request cuts it.
 * - `headsilence[:N]` — the first N sends of a body (default 1) send their head (status,
 *   headers, the role chunk and the first token) and then nothing, the socket held open until
 *   the client leaves (at most {@link SILENCE_CAP_MS}).
 */

/** The longest a `headsilence` stream holds its socket (a client with no idle bound must not hold model-sim for ever). */
export const SILENCE_CAP_MS = 10 * 60_000;

/** The frames of an answer as paced: comments inside a trickle's gaps; a silent stream's head only. */
export async function* pacedFrames(
  frames: AsyncIterable<string>,
  pacing: { trickleMs?: number; silence: boolean },
): AsyncGenerator<string> {
  let n = 0;
  for await (const frame of frames) {
    if (pacing.silence && n >= 2) return;
    if (n > 0 && pacing.trickleMs) {
      await sleep(pacing.trickleMs / 2);
      yield ": keep-alive\n\n";
      await sleep(pacing.trickleMs - pacing.trickleMs / 2);
    }
    n++;
    yield frame;
  }
}

/** Holds a silent stream's socket open until the client closes it (or the cap). */
export async function holdSilent(res: ServerResponse): Promise<void> {
  const cap = new AbortController();
  const timer = setTimeout(() => cap.abort(), SILENCE_CAP_MS);
  try {
    await once(res, "close", { signal: cap.signal });
  } catch {
    res.destroy();
  } finally {
    clearTimeout(timer);
  }
}
