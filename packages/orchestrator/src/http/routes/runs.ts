import { CancelAnswer, CancelRequest, RunDetail, RunListQuery, RunPage, RunSummary } from "@jr2/wire";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { FeedNotices } from "../../durability/store/ownership.js";
import type { RunHost } from "../../runs/run-host.js";
import { createStoreFeed, type FeedStore, storeFeedOf } from "../../runs/store-feed.js";
import { errorResponses } from "./error-responses.js";
import { clientOf } from "./resume-retry.js";
import { streamEvents, streamStoredEvents } from "./run-events-stream.js";

const RunParams = z.object({ runId: z.string().min(1).max(200) });

/**
 * The run routes (instance token): `GET /runs` (filtered, paged), `GET /runs/:runId`,
 * `GET /runs/:runId/events` (the run feed as SSE) and `POST /runs/:runId/cancel`.
 * @see SPEC §4.1
 */
export const runRoutes: FastifyPluginAsyncZod<{
  host: RunHost;
  heartbeatMs?: number;
  /** A store several instances share (ADR-0280): a run hosted elsewhere is followed from it. */
  store?: (FeedStore & { notices?: FeedNotices | undefined }) | undefined;
}> = async (app, options) => {
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
        summary:
          "Cancel a run (live, or drifted: closed with no Machine); its Turns end. `expect`: the status you saw",
        params: RunParams,
        body: CancelRequest.nullish(),
        response: { 200: CancelAnswer, ...errorResponses(400, 401, 404, 409, 413, 415, 503) },
      },
      config: { auth: "instance" },
    },
    async (request) =>
      host.cancelRun(request.params.runId, {
        ...(request.body?.expect ? { expect: request.body.expect } : {}),
        by: clientOf(request.headers),
      }),
  );

  app.get(
    "/runs/:runId/events",
    {
      schema: {
        summary:
          "The run's event log (text/event-stream): status, admission, pick, usage, retry, fault, gate, gate-answered, timer",
        description:
          "Each SSE message is `id: <seq>`, `event: <type>`, `data: <RunFeedEvent JSON>`. The stream replays the " +
          "run's stored event log from `since` (or after `Last-Event-ID`) with each event's original `seq` and `at` " +
          "— after any number of restarts: `seq` goes on from the stored log — then follows live, and ends once the " +
          "run is no longer running: at once for a settled run, whatever `since` is; a live run's stream always ends " +
          "with its final status event, even when `since` lies past the log's end. A settled run's log lasts as long " +
          "as `JR2_EVENT_RETENTION_DAYS` keeps it (default: forever); a run settled before the log existed has its " +
          "final status event alone, numbered 0. On a store several instances share, a run hosted by another instance " +
          "is followed from the store — the same messages — and keeps going when another instance adopts it.",
        params: RunParams,
        querystring: z.object({ since: z.coerce.number().int().nonnegative().optional() }),
        response: errorResponses(401, 404),
      },
      config: { auth: "instance" },
    },
    async (request, reply) => {
      const { runId } = request.params;
      const feed = await host.feedOf(runId);
      // Hosted by another instance (or moving to one): its events come through the store.
      const stored =
        !host.isLive(runId) && options.store ? await storeFeedOf(options.store, runId) : undefined;
      const lastId = Number(request.headers["last-event-id"]);
      const since = request.query.since ?? (Number.isInteger(lastId) ? lastId + 1 : 0);
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      // Headers now, not with the first event: a follower with nothing to replay knows it is connected.
      out.flushHeaders();
      const heartbeatMs = options.heartbeatMs ?? 15_000;
      if (stored) return streamStoredEvents({ runId, feed: stored, since, out, streams, heartbeatMs });
      await streamEvents({
        host,
        runId,
        feed,
        since,
        out,
        streams,
        heartbeatMs,
        handover: options.store?.notices
          ? createStoreFeed(options.store, options.store.notices, runId)
          : undefined,
      });
    },
  );
};
