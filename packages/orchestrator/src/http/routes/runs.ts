import { CancelAnswer, RunDetail, type RunFeedEvent, RunListQuery, RunPage, RunSummary } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { RunHost } from "../../runs/run-host.js";
import { errorResponses } from "./error-responses.js";

const RunParams = z.object({ runId: z.string().min(1).max(200) });

/**
 * The run routes (instance token): `GET /runs` (filtered, paged), `GET /runs/:runId`,
 * `GET /runs/:runId/events` (the run feed as SSE) and `POST /runs/:runId/cancel`.
 * @see SPEC §4.1
 */
export const runRoutes: FastifyPluginAsyncZod<{ host: RunHost; heartbeatMs?: number }> = async (
  app,
  options,
) => {
  const { host } = options;
  /** Open feed streams; ended when the app closes, so a live follower never holds shutdown. */
  const streams = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const finish of [...streams]) finish();
  });

  app.get(
    "/runs",
    {
      schema: {
        summary:
          "List runs, newest first, filtered by status, workflow and outcome; with `limit` or `cursor` one page ({ runs, nextCursor })",
        querystring: RunListQuery,
        response: { 200: z.union([z.array(RunSummary), RunPage]), ...errorResponses(400, 401) },
      },
      config: { auth: "instance" },
    },
    // Without paging the answer stays the array it always was (ADR-0062).
    async (request) => {
      const { query } = request;
      return query.limit === undefined && query.cursor === undefined
        ? host.listRuns(query)
        : host.pageRuns(query);
    },
  );

  app.get(
    "/runs/:runId",
    {
      schema: {
        summary: "A run: status, value, context, open Gates, live Turns, usage",
        params: RunParams,
        response: { 200: RunDetail, ...errorResponses(401, 404) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.getRun(request.params.runId),
  );

  app.post(
    "/runs/:runId/cancel",
    {
      schema: {
        summary: "Cancel a run; its Turns end",
        params: RunParams,
        response: { 200: CancelAnswer, ...errorResponses(401, 404, 409, 503) },
      },
      config: { auth: "instance" },
    },
    async (request) => host.cancelRun(request.params.runId),
  );

  app.get(
    "/runs/:runId/events",
    {
      schema: {
        summary: "The run feed (text/event-stream): status, admission, pick, usage, retry, fault, gate",
        description:
          "Each SSE message is `id: <seq>`, `event: <type>`, `data: <RunFeedEvent JSON>`. The stream replays " +
          "from `since` (or after `Last-Event-ID`) and ends once the run is no longer running — at once for a " +
          "settled run, whatever `since` is; a live run's stream always ends with its final status event, even " +
          "when `since` lies past the feed's end (after a restart the feed is renumbered from 0). A settled run's feed " +
          "is whole for the 100 most recently settled runs; an older one's (or one settled before a restart) is its " +
          "final status event alone, numbered 0.",
        params: RunParams,
        querystring: z.object({ since: z.coerce.number().int().nonnegative().optional() }),
        response: errorResponses(401, 404),
      },
      config: { auth: "instance" },
    },
    async (request, reply) => {
      const feed = await host.feedOf(request.params.runId);
      const lastId = Number(request.headers["last-event-id"]);
      const since = request.query.since ?? (Number.isInteger(lastId) ? lastId + 1 : 0);
      // Synchronous from here to `subscribe`: no event can slip between the backlog and it.
      const isLive = () => host.isLive(request.params.runId);
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      // Headers now, not with the first event: a follower with nothing to replay knows it is connected.
      out.flushHeaders();
      const write = (event: RunFeedEvent) =>
        out.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      const backlog = feed.since(since);
      backlog.forEach(write);
      if (!isLive()) {
        out.end();
        return;
      }
      let next = since + backlog.length;
      const heartbeat = setInterval(() => out.write(": keep-alive\n\n"), options.heartbeatMs ?? 15_000);
      heartbeat.unref();
      let finished = false;
      // Ends the stream once; also runs when the client goes away (the response closes).
      const finish = () => {
        if (finished) return;
        finished = true;
        streams.delete(finish);
        clearInterval(heartbeat);
        unsubscribe();
        out.end();
      };
      const unsubscribe = feed.subscribe((event) => {
        const final = event.type === "status" && event.status !== "running";
        // A `since` past the end (an old Last-Event-ID after a restart renumbered the feed) skips
        // what it already saw — but never the final status: the stream ends on it, written.
        if (event.seq >= next || final) write(event);
        next = Math.max(next, event.seq + 1);
        if (final) finish();
      });
      streams.add(finish);
      out.on("close", finish);
    },
  );
};
