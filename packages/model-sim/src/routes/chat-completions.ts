import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { Simulator } from "../simulator.js";
import { answerFrames, completionBody } from "../sse.js";

/**
 * `POST /v1/chat/completions`: streamed (SSE) or not, per the body's `stream`.
 * The body reaches the handler as the raw string (see app.ts) so it is recorded byte-exact.
 *
 * @see SPEC §9
 */
export function chatCompletionsRoute(app: FastifyInstance, sim: Simulator): void {
  app.post("/v1/chat/completions", async (request, reply) => {
    const raw = typeof request.body === "string" ? request.body : "";
    const outcome = sim.chat(raw);
    if (outcome.kind === "refused") return reply.code(outcome.status).send(outcome.body);
    const { answer, usage, meta, model } = outcome;
    const msPerPiece = model.policy.kind === "slow" ? model.policy.msPerToken : 0;
    if (outcome.request.stream === true) {
      const includeUsage = outcome.request.stream_options?.include_usage === true;
      reply.header("content-type", "text/event-stream; charset=utf-8").header("cache-control", "no-cache");
      return reply.send(Readable.from(answerFrames(answer, meta, includeUsage ? usage : null, msPerPiece)));
    }
    if (answer.finishReason === null) {
      // A dropped answer without streaming: the connection closes with no response at all.
      reply.hijack();
      reply.raw.destroy();
      return reply;
    }
    return reply.send(completionBody(answer, meta, usage));
  });
}
