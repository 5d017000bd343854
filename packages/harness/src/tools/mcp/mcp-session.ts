import { chmod, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpServers } from "@jr2/wire";
import { withinBlock } from "./bounds/listing-bounds.js";
import { McpServerDown } from "./bounds/message-bound.js";
import { relistGate } from "./bounds/relist-gate.js";
import {
  type CanonicalTool,
  canonicalTools,
  type McpSnapshot,
  type NameCollision,
  snapshotOf,
} from "./canonical.js";
import { connectMcp, type McpConnectContext, type McpConnection } from "./mcp-connection.js";
import type { McpSnapshotStore } from "./snapshot-store.js";

/** Bounds of the MCP client (ms), from the Harness's config; tests lower them. */
export interface McpTimeouts {
  /** Connect + initialize. Default 15 000. */
  startMs: number;
  /** One `tools/list`, all its pages within this one deadline. Default 10 000. */
  listMs: number;
  /** One `tools/call`. Default 120 000. */
  callMs: number;
}

export const DEFAULT_MCP_TIMEOUTS: McpTimeouts = { startMs: 15_000, listMs: 10_000, callMs: 120_000 };

/** Why a server is not in service for this conversation (said to the model and in one warn line). */
export interface ServerDown {
  server: string;
  reason: string;
  required: boolean;
}

/**
 * One conversation's MCP servers: their connections, the frozen snapshot (what the tools block
 * shows for the whole conversation) and each server's live tool names (what it offers now:
 * re-listed on `list_changed` and on reconnect, never shown to the model).
 */
export interface McpSession {
  readonly snapshot: McpSnapshot;
  /** True when the snapshot was read from the store (a rebuild), not listed now. */
  readonly reused: boolean;
  readonly down: readonly ServerDown[];
  readonly collisions: readonly NameCollision[];
  /** Calls `tool` of its server; reconnects once on a dropped connection. */
  call(tool: CanonicalTool, args: unknown, signal?: AbortSignal): Promise<McpCallOutcome>;
  /**
   * A rebuild's stored snapshot differs from what the servers list now (issue 29 item 2: "its
   * list compared with the stored snapshot"): the hash listed now, else `undefined`. The
   * conversation keeps its stored snapshot; a vanished tool answers with its receipt.
   */
  readonly drifted: string | undefined;
  /** How many `list_changed` notifications reached the Harness (the bench reads it). */
  listChanged(): number;
  close(): Promise<void>;
}

export type McpCallOutcome =
  | { kind: "result"; text: string; isError: boolean }
  | { kind: "gone" }
  | { kind: "down"; reason: string }
  | { kind: "failed"; message: string };

/** What opening a session needs. */
export interface OpenMcpOptions {
  iid: string;
  servers: McpServers;
  /** The Worktree (read/write access); absent for `none`: an empty private directory. */
  cwd: string | undefined;
  access: "none" | "read" | "write";
  context: Omit<McpConnectContext, "root" | "access" | "worktree" | "onListChanged">;
  store: McpSnapshotStore;
  timeouts?: Partial<McpTimeouts>;
  /** A server announced `tools/list_changed` (logged; the snapshot stays). */
  onListChanged?: (server: string) => void;
}

/**
 * Opens a conversation's MCP session (issue 29 items 2–4): connects every server (in parallel),
 * lists each once, canonicalizes and freezes the snapshot, and stores it — or, when the store
 * already holds one for `iid` (a rebuild after a restart), reuses it unchanged, the live lists
 * only telling which tools vanished. A server that fails to start or list is `down` (never a
 * throw); the caller faults the Turn only for a `required` one (`mcp-unavailable`).
 */
export async function openMcpSession(opts: OpenMcpOptions): Promise<McpSession> {
  const t = { ...DEFAULT_MCP_TIMEOUTS, ...opts.timeouts };
  const root = opts.cwd ?? (await emptyRoot());
  const access = opts.access === "write" ? "write" : "read";
  let changes = 0;
  const connections = new Map<string, McpConnection>();
  const live = new Map<string, Set<string>>();
  const down: ServerDown[] = [];
  /** Servers closed for what they sent (an oversized message): down for the conversation. */
  const dead = new Map<string, string>();

  const relist = async (server: string, conn: McpConnection) => {
    const tools = await conn.listTools(t.listMs);
    live.set(server, new Set(tools.map((x) => x.name)));
    return tools;
  };
  const connect = async (server: string): Promise<McpConnection> => {
    const spec = opts.servers[server]!;
    let self: McpConnection | undefined;
    // Only the live names change on `list_changed`: the snapshot is frozen (new conversations
    // list again). A storm of notifications re-lists at most once per interval, one listing at
    // a time (relist-gate.ts), and is logged as often.
    const gate = relistGate(async () => {
      opts.onListChanged?.(server);
      if (self && connections.get(server) === self) await relist(server, self).catch(() => undefined);
    });
    self = await connectMcp(
      server,
      spec,
      {
        ...opts.context,
        root,
        access,
        ...(opts.cwd ? { worktree: opts.cwd } : {}),
        onListChanged: () => {
          changes++;
          gate();
        },
      },
      t.startMs,
    );
    connections.set(server, self);
    return self;
  };

  const perServer = new Map<string, CanonicalTool[]>();
  await Promise.all(
    Object.entries(opts.servers).map(async ([server, spec]) => {
      try {
        const conn = await connect(server);
        perServer.set(server, canonicalTools(server, await relist(server, conn)));
      } catch (err) {
        down.push({ server, reason: reasonOf(err), required: spec.required === true });
      }
    }),
  );
  const listed = withinBlock(perServer, opts.servers, down);
  const stored = await opts.store.get(opts.iid);
  const fresh = snapshotOf(listed);
  const snapshot = stored ?? fresh.snapshot;
  if (!stored && down.every((d) => !d.required)) await opts.store.put(opts.iid, snapshot);
  down.sort((a, b) => (a.server < b.server ? -1 : 1));

  return {
    snapshot,
    reused: stored !== undefined,
    down,
    collisions: stored ? [] : fresh.collisions,
    drifted:
      stored && down.length === 0 && stored.hash !== fresh.snapshot.hash ? fresh.snapshot.hash : undefined,
    listChanged: () => changes,
    call: async (tool, args, signal) => {
      let conn = connections.get(tool.server);
      for (let attempt = 0; attempt < 2; attempt++) {
        const gone = dead.get(tool.server);
        if (gone) return { kind: "down", reason: gone };
        try {
          if (!conn) conn = await connect(tool.server);
          if (!live.has(tool.server) || attempt > 0) await relist(tool.server, conn);
          if (!live.get(tool.server)?.has(tool.tool)) return { kind: "gone" };
          const r = await conn.callTool(tool.tool, args, t.callMs, signal);
          return { kind: "result", ...r };
        } catch (err) {
          if (signal?.aborted) return { kind: "failed", message: "aborted" };
          if (err instanceof McpServerDown) {
            // Never reconnected: it would ask the same question and get the same answer.
            dead.set(tool.server, err.message);
            connections.delete(tool.server);
            await conn?.close().catch(() => undefined);
            return { kind: "down", reason: err.message };
          }
          if (attempt === 0 && isDropped(err)) {
            // A dropped connection (a server restart, a network blip): reconnect once, re-list.
            await conn?.close().catch(() => undefined);
            connections.delete(tool.server);
            conn = undefined;
            continue;
          }
          return conn ? { kind: "failed", message: reasonOf(err) } : { kind: "down", reason: reasonOf(err) };
        }
      }
      return { kind: "down", reason: "the connection dropped twice" };
    },
    close: async () => {
      await Promise.all([...connections.values()].map((c) => c.close().catch(() => undefined)));
      connections.clear();
    },
  };
}

/** An empty directory the sandbox's user may enter: a `none` Agent's server binds no Worktree. */
async function emptyRoot(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "jr2-mcp-"));
  await chmod(dir, 0o755);
  return dir;
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Transport-level failures (worth one reconnect), as opposed to a tool's own error. */
function isDropped(err: unknown): boolean {
  const m = reasonOf(err);
  return /closed|ECONNRESET|ECONNREFUSED|fetch failed|socket|Session not found|404|terminated|not connected/i.test(
    m,
  );
}
