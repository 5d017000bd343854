/**
 * The API's reads as TanStack Query hooks, each parsed with its @jr2/wire schema. The runs
 * list polls every 3 s (no run-changes stream exists; issue 12 allows polling no faster than
 * 2 s); a run page is refreshed by its event stream instead.
 */
import {
  MachineChart,
  RunDetail,
  RunFeedEvent,
  RunHistory,
  RunPage,
  RunRepos,
  TurnList,
  TurnTranscript,
  WorkflowMenu,
  WorkflowSummary,
} from "@jr2/wire";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { z } from "zod";
import { ApiError, api, seg } from "./api.js";
import { isFinalStatus } from "./feed-end.js";
import { isMissingRoute } from "./missing-route.js";
import { followStream } from "./sse.js";

/** Runs list filters (the query string of `GET /runs`). */
export interface RunFilters {
  workflow?: string;
  status?: string;
  outcome?: string;
}

/** One page of 50 runs, newest first; `cursor` from the previous page. */
export function useRunPage(filters: RunFilters, cursor: string | null) {
  const q = new URLSearchParams({ limit: "50" });
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  if (cursor) q.set("cursor", cursor);
  return useQuery({
    queryKey: ["runs", filters, cursor],
    queryFn: ({ signal }) => api(`/runs?${q}`, RunPage, { signal }),
    refetchInterval: 3000,
  });
}

export const useWorkflows = () =>
  useQuery({
    queryKey: ["workflows"],
    queryFn: ({ signal }) => api("/workflows", z.array(WorkflowSummary), { signal }),
  });

export const useMenu = (name: string | undefined) =>
  useQuery({
    queryKey: ["menu", name],
    enabled: Boolean(name),
    queryFn: ({ signal }) => api(`/workflows/${seg(name ?? "")}/menu`, WorkflowMenu, { signal }),
  });

export const useChart = (name: string | undefined) =>
  useQuery({
    queryKey: ["chart", name],
    enabled: Boolean(name),
    retry: false,
    queryFn: ({ signal }) => api(`/workflows/${seg(name ?? "")}/chart`, MachineChart, { signal }),
  });

/**
 * One row's run detail for its token columns: a settled run is read once (its usage no longer
 * changes), a running one every 3 s. Shares the cache with the run page.
 */
export const useRowRun = (runId: string, running: boolean) =>
  useQuery({
    queryKey: ["run", runId],
    queryFn: ({ signal }) => api(`/runs/${seg(runId)}`, RunDetail, { signal }),
    staleTime: running ? 3000 : Number.POSITIVE_INFINITY,
    refetchInterval: running ? 3000 : false,
  });

export const useRun = (runId: string) =>
  useQuery({
    queryKey: ["run", runId],
    queryFn: ({ signal }) => api(`/runs/${seg(runId)}`, RunDetail, { signal }),
  });

/**
 * A 404 for a route this Orchestrator lacks means "it serves no transcripts yet" (issue 11's
 * routes): null. A 404 about the data (no such run or Turn) stays an error the page shows.
 */
async function orNullOn404<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ApiError && isMissingRoute(error.status, error.code)) return null;
    throw error;
  }
}

export const useTurns = (runId: string) =>
  useQuery({
    queryKey: ["turns", runId],
    queryFn: ({ signal }) => orNullOn404(api(`/runs/${seg(runId)}/turns`, TurnList, { signal })),
  });

export const useTranscript = (runId: string, turnId: string) =>
  useQuery({
    queryKey: ["transcript", runId, turnId],
    queryFn: ({ signal }) =>
      orNullOn404(api(`/runs/${seg(runId)}/turns/${seg(turnId)}`, TurnTranscript, { signal })),
  });

/**
 * The run's Repo Slots as branch views (ADR-0225); null where this Orchestrator has no such
 * route. Re-read with the run (the feed invalidates it): a push shows once it is on the log.
 */
export const useRepos = (runId: string) =>
  useQuery({
    queryKey: ["repos", runId],
    queryFn: ({ signal }) => orNullOn404(api(`/runs/${seg(runId)}/repos`, RunRepos, { signal })),
  });

/** A message's JSON, or null when it is not JSON (then the schema refuses it and it is skipped). */
function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The run's kept versions, oldest first (ADR-0270); null where this Orchestrator has no history route. */
export const useHistory = (runId: string) =>
  useQuery({
    queryKey: ["history", runId],
    queryFn: ({ signal }) => orNullOn404(api(`/runs/${seg(runId)}/history`, RunHistory, { signal })),
  });

/**
 * The run's event log: replayed, then followed live; each event parsed with {@link RunFeedEvent}.
 * `refollow()` reads it again from the start — after a control (retry, resume) sets a settled
 * run running again, since the stream ended at its final status.
 */
export function useRunFeed(runId: string): { events: RunFeedEvent[]; state: string; refollow: () => void } {
  const [events, setEvents] = useState<RunFeedEvent[]>([]);
  const [state, setState] = useState("connecting");
  const [generation, setGeneration] = useState(0);
  const client = useQueryClient();
  const seen = useRef(new Set<number>());
  // biome-ignore lint/correctness/useExhaustiveDependencies: `generation` is the refollow trigger
  useEffect(() => {
    seen.current = new Set();
    setEvents([]);
    let pending: RunFeedEvent[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Batched: a replay of thousands of events renders once, and the run is re-read once.
    const flush = () => {
      timer = undefined;
      const batch = pending;
      pending = [];
      setEvents((old) => [...old, ...batch]);
      void client.invalidateQueries({ queryKey: ["run", runId] });
      void client.invalidateQueries({ queryKey: ["turns", runId] });
      void client.invalidateQueries({ queryKey: ["transcript", runId] });
      void client.invalidateQueries({ queryKey: ["history", runId] });
      void client.invalidateQueries({ queryKey: ["repos", runId] });
    };
    const stop = followStream(`/runs/${seg(runId)}/events`, {
      onMessage: (message) => {
        const parsed = RunFeedEvent.safeParse(jsonOrNull(message.data));
        if (!parsed.success || seen.current.has(parsed.data.seq)) return;
        seen.current.add(parsed.data.seq);
        pending.push(parsed.data);
        timer ??= setTimeout(flush, 150);
      },
      onState: (s, detail) => setState(detail ? `${s} (${detail})` : s),
      isLast: isFinalStatus,
    });
    return () => {
      stop();
      if (timer) clearTimeout(timer);
    };
  }, [runId, client, generation]);
  return { events, state, refollow: useCallback(() => setGeneration((g) => g + 1), []) };
}
