import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance } from "fastify";
import { kvInput } from "../kv/kv-input.js";
import type { Simulator } from "../simulator.js";
import { answerFrames, completionBody, ERROR_EVENT } from "../sse.js";
import { holdSilent, pacedFrames } from "../stream-pacing.js";

/**
 * `POST /v1/chat/completions`: streamed (SSE) or not, per the body's `stream`.
 * The body reaches the handler as the raw string (see app.ts) so it is recorded byte-exact.
 * A streamed answer is written by hand on the raw response so a fault can end it the way a
 * real failure does: cleanly without a finish reason (`dropper`) or by destroying the socket
 * after the first bytes (`cut`).
 *
 * @see SPEC §9
 */
export function chatCompletionsRoute(app: FastifyInstance, sim: Simulator): void {
  app.post("/v1/chat/completions", async (request, reply) => {
    const raw = typeof request.body === "string" ? request.body : "";
    const outcome = sim.chat(raw);
    if (outcome.kind === "refused") {
      return reply.code(outcome.status).headers(outcome.headers).send(outcome.body);
    }
    const { answer, wireUsage, meta, model, ending } = outcome;
    const msPerPiece = model.policy.kind === "slow" ? model.policy.msPerToken : 0;
    // Recorded already (sim.chat): a test sees the request in flight during this wait.
    if (model.faults.latency) await sleep(model.faults.latency);
    // The time model (--time-scale): the answer waits for its prefill and decode on the KV budget.
    if (sim.kv) await sim.kv.run(kvInput(outcome.usage));
    if (outcome.request.stream === true) {
      const includeUsage = outcome.request.stream_options?.include_usage === true;
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
      const silence = ending === "silence";
      const frames = answerFrames(
        answer,
        meta,
        includeUsage ? wireUsage : null,
        msPerPiece,
        silence ? "complete" : ending,
      );
      for await (const frame of pacedFrames(frames, { trickleMs: model.faults.trickle, silence })) {
        if (res.destroyed) return reply;
        // Each frame is flushed before the next: a `cut` then destroys a socket the client read from.
        await new Promise<void>((resolve) => res.write(frame, () => resolve()));
      }
      if (silence) await holdSilent(res);
      else if (ending === "cut") res.socket?.destroy();
      else res.end();
      return reply;
    }
    if (ending === "error") return reply.code(500).send(ERROR_EVENT);
    if (ending === "drop" || ending === "cut" || ending === "silence") {
      // Without streaming a cut-off answer is a connection closed with no response at all.
      reply.hijack();
      reply.raw.destroy();
      return reply;
    }
    return reply.send(
      completionBody(answer, meta, wireUsage, ending === "abort" ? "abort" : answer.finishReason),
    );
  });
}
