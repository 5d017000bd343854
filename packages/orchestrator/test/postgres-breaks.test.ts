/**
 * The PostgreSQL store on a bad day (issue 15, ADR-0280): a database paused or killed under
 * saves and brought back, a commit whose answer never came, hostile text (quotes, backslashes,
 * NUL, unicode, 12 MB blobs), concurrency of saves, adoptions and renewals, the fence's edges,
 * the password in every error path, interrupted migrations, and notices subscribed by the
 * thousand. The first suite starts and kills its own throwaway cluster
 * (`scripts/pg-test-cluster.sh`); the second uses the shared test cluster (JR2_TEST_PG_URL).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunFeedEvent } from "@jr2/wire";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { FencedError } from "../src/durability/store/ownership.js";
import {
  openPostgresStore,
  type PostgresRunStore,
  type PostgresStoreOptions,
} from "../src/durability/store/postgres.js";
import { parseStoreUrl } from "../src/durability/store/postgres-connection.js";
import type { RunBlob } from "../src/durability/store/run-store.js";
import { describePg, freshPgDatabase } from "./pg.js";
import { pgInstances } from "./pg-instances.js";

const LEASE_MS = 300;
const SCRIPT = fileURLToPath(new URL("../../../scripts/pg-test-cluster.sh", import.meta.url));

function blob(runId: string, patch: Partial<RunBlob> = {}): RunBlob {
  return {
    runId,
    workflow: "review",
    machineFingerprint: "fp1",
    status: "running",
    snapshot: { value: "implement", context: {} },
    input: {},
    ledger: {},
    epochs: {},
    timers: [],
    usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0 },
    createdAt: "2026-11-30T00:00:00.000Z",
    updatedAt: "2026-11-30T00:00:00.000Z",
    ...patch,
  };
}

const event = (seq: number, value: unknown = "event data"): RunFeedEvent =>
  ({ seq, at: "2026-11-30T00:00:00.000Z", type: "status", status: "running", value }) as RunFeedEvent;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await sleep(50);
  }
}

/** Resolves to how `p` settled, or "hung" after `ms`. */
async function outcome(p: Promise<unknown>, ms: number): Promise<"fulfilled" | "rejected" | "hung"> {
  return Promise.race([
    p.then(
      () => "fulfilled" as const,
      () => "rejected" as const,
    ),
    sleep(ms).then(() => "hung" as const),
  ]);
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => new Error("accepted"),
    (e: unknown) => e as Error,
  );

/**
 * A TCP proxy to `target` that, once `armed`, forwards the next `COMMIT` and then cuts both
 * sides: the database commits, the client never hears (a crash or a network cut after commit).
 */
async function commitCuttingProxy(target: URL): Promise<{ url: string; armed: boolean; close(): void }> {
  const sockets = new Set<net.Socket>();
  const state = { url: "", armed: false, close: () => {} };
  const server = net.createServer((down) => {
    const up = net.connect(Number(target.port), target.hostname);
    for (const s of [down, up]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => sockets.delete(s));
    }
    up.on("data", (d) => down.write(d));
    up.on("close", () => down.destroy());
    down.on("close", () => up.end());
    down.on("data", (d) => {
      up.write(d);
      if (state.armed && d.includes(Buffer.from("COMMIT\0"))) {
        state.armed = false;
        down.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxied = new URL(target);
  proxied.port = String((server.address() as net.AddressInfo).port);
  state.url = proxied.toString();
  state.close = () => {
    for (const s of sockets) s.destroy();
    server.close();
  };
  return state;
}

/** A throwaway cluster of this suite's own, to pause, kill and restart. */
class Cluster {
  dir = "";
  url = "";
  start() {
    this.dir = mkdtempSync(join(tmpdir(), "jr2-pg-breaks-"));
    this.url = execFileSync("bash", [SCRIPT, "start", this.dir], { encoding: "utf8" }).trim();
  }
  private pgCtl(...args: string[]) {
    const bin = execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"], {
      encoding: "utf8",
    }).trim();
    const cmd = [`${bin}/pg_ctl`, "-D", join(this.dir, "data"), ...args];
    execFileSync(
      process.getuid?.() === 0 ? "runuser" : cmd[0]!,
      process.getuid?.() === 0 ? ["-u", "postgres", "--", ...cmd] : cmd.slice(1),
      {
        stdio: "ignore",
      },
    );
  }
  killNow() {
    this.pgCtl("-m", "immediate", "-w", "stop");
  }
  restart() {
    const port = new URL(this.url).port;
    this.pgCtl(
      "-l",
      join(this.dir, "server.log"),
      "-w",
      "-t",
      "60",
      "-o",
      `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${this.dir}/sock -c max_connections=200`,
      "start",
    );
  }
  /** The postmaster and every backend it forked. */
  pids(): number[] {
    const postmaster = Number(readFileSync(join(this.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    const children = execFileSync("bash", ["-c", `pgrep -P ${postmaster} || true`], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
    return [postmaster, ...children];
  }
  signal(sig: "SIGSTOP" | "SIGCONT", pids = this.pids()) {
    for (const pid of pids) process.kill(pid, sig);
  }
  stop() {
    if (this.dir) execFileSync("bash", [SCRIPT, "stop", this.dir], { stdio: "ignore" });
  }
}

describePg("the PostgreSQL store when its database is paused, killed and restarted", () => {
  const cluster = new Cluster();
  let url = "";
  const open: PostgresRunStore[] = [];
  const lines: string[] = [];
  const log = {
    warn: (obj: unknown, msg?: string) => lines.push(JSON.stringify([obj, msg])),
    info: (obj: unknown, msg?: string) => lines.push(JSON.stringify([obj, msg])),
  };
  const instance = async (id: string, options: Partial<PostgresStoreOptions> = {}, at = url) => {
    const store = await openPostgresStore(at, {
      instanceId: id,
      advertiseUrl: `http://127.0.0.1:1${id.length}`,
      leaseMs: 1_000,
      statementTimeoutMs: 1_500,
      poolMax: 4,
      log: log as unknown as PostgresStoreOptions["log"],
      ...options,
    });
    open.push(store);
    return store;
  };
  const sessions = async (app: string) => {
    const c = new pg.Client(url);
    await c.connect();
    try {
      const { rows } = await c.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1",
        [app],
      );
      return Number(rows[0]!.n);
    } finally {
      await c.end();
    }
  };

  beforeAll(() => {
    cluster.start();
    const u = new URL(cluster.url);
    u.pathname = "/postgres";
    url = u.toString();
  }, 60_000);
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });
  afterAll(() => cluster.stop());

  it("a save while the database is paused rejects by its timeout (never hangs, never succeeds); saves work once it is back, leaking no client", async () => {
    const a = await instance("A");
    await a.save(blob("p-1"));
    cluster.signal("SIGSTOP");
    let paused = true;
    try {
      const saves = [
        a.save(blob("p-1", { updatedAt: "2026-11-30T00:00:01.000Z" })),
        a.save(blob("p-2")),
        a.appendEvents("p-1", [event(1)]),
      ];
      const results = await Promise.all(saves.map((s) => outcome(s, 12_000)));
      expect(results).toEqual(["rejected", "rejected", "rejected"]);
      cluster.signal("SIGCONT");
      paused = false;
      await a.save(blob("p-1", { updatedAt: "2026-11-30T00:00:02.000Z" }));
      await a.save(blob("p-2"));
      expect((await a.load("p-1"))?.updatedAt).toBe("2026-11-30T00:00:02.000Z");
      expect(a.pool.totalCount).toBeLessThanOrEqual(4);
      await eventually(async () => (await sessions("jr2")) <= 4);
    } finally {
      if (paused) cluster.signal("SIGCONT");
    }
  }, 30_000);

  it("a claim whose COMMIT reached the database but whose answer was lost does not fence its own run", async () => {
    const cut = await commitCuttingProxy(new URL(url));
    try {
      const a = await instance("A", {}, cut.url);
      cut.armed = true;
      expect(await outcome(a.save(blob("c-1")), 12_000)).toBe("rejected");
      // The database committed the claim; A never heard so.
      await eventually(async () => (await a.ownership.holder("c-1"))?.instanceId === "A");
      expect(a.ownership.holds("c-1")).toBe(false);
      await a.save(blob("c-1", { updatedAt: "2026-11-30T00:00:01.000Z" }));
      expect(a.ownership.holds("c-1")).toBe(true);
      expect((await a.ownership.holder("c-1"))?.epoch).toBe(2);
      expect((await a.load("c-1"))?.updatedAt).toBe("2026-11-30T00:00:01.000Z");
      // An expired row of its own is adoption's, not a claim's.
      cut.armed = true;
      expect(await outcome(a.save(blob("c-2")), 12_000)).toBe("rejected");
      await eventually(async () => (await a.ownership.holder("c-2"))?.instanceId === "A");
      await sleep(1_100);
      await expect(a.save(blob("c-2"))).rejects.toThrow(FencedError);
    } finally {
      for (const s of open.splice(0)) await s.close();
      cut.close();
    }
  }, 30_000);

  it("the database killed (immediate) under saves and restarted: every save settles, later saves work, the LISTEN client is back and a reader misses no event", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const seen: number[] = [];
    b.notices.subscribe("k-1", (seq) => seen.push(seq));
    await a.save(blob("k-1"), [], [], [event(0)]);
    await eventually(() => seen.includes(0));
    const inFlight = Array.from({ length: 12 }, (_, i) =>
      a.save(blob(`k-${(i % 4) + 1}`, { updatedAt: `2026-11-30T00:00:0${i % 10}.000Z` })),
    );
    cluster.killNow();
    const results = await Promise.all(inFlight.map((s) => outcome(s, 15_000)));
    expect(results).not.toContain("hung");
    cluster.restart();
    // Written before B's LISTEN connection is back: B hears of it by the catch-up.
    await eventually(async () => {
      await a.appendEvents("k-1", [event(1)]);
      return true;
    }, 15_000);
    await eventually(() => seen.includes(1), 15_000);
    await a.save(blob("k-1", { updatedAt: "2026-11-30T00:01:00.000Z" }), [], [], [event(2)]);
    await eventually(() => seen.includes(2), 5_000);
    expect(a.pool.totalCount).toBeLessThanOrEqual(4);
    expect(await sessions("jr2-notices")).toBe(2);
    expect(lines.some((l) => l.includes("LISTEN connection back"))).toBe(true);
  }, 60_000);

  it("after the whole database was paused past every timeout, notices reach a reader again", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const seen: number[] = [];
    b.notices.subscribe("s-1", (seq) => seen.push(seq));
    await a.save(blob("s-1"), [], [], [event(0)]);
    await eventually(() => seen.includes(0));
    cluster.signal("SIGSTOP");
    try {
      expect(await outcome(a.appendEvents("s-1", [event(1)]), 12_000)).toBe("rejected");
    } finally {
      cluster.signal("SIGCONT");
    }
    await a.appendEvents("s-1", [event(2)]);
    await eventually(() => seen.includes(2), 10_000);
    expect(await a.events("s-1", 0, 10)).toEqual([event(0), event(2)]);
  }, 30_000);

  it("closing the store while its LISTEN connection is reconnecting leaves no connection behind", async () => {
    const a = await instance("A");
    const admin = new pg.Client(url);
    await admin.connect();
    try {
      const postmaster = cluster.pids()[0]!;
      cluster.signal("SIGSTOP", [postmaster]); // new connections hang; open sessions still answer
      try {
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'jr2-notices'",
        );
        await sleep(600); // the drop is seen; the reconnect is waiting on the paused postmaster
        await a.close();
      } finally {
        cluster.signal("SIGCONT", [postmaster]);
      }
      await sleep(1_500);
      const { rows } = await admin.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'jr2-notices'",
      );
      expect(Number(rows[0]!.n)).toBe(0);
    } finally {
      await admin.end();
    }
  }, 30_000);
});

describePg("the PostgreSQL store given hostile input, contention and bad URLs", () => {
  const pgs = pgInstances("jr2_breaks", LEASE_MS);
  const { lines, runId } = pgs;
  const instance = pgs.instance.bind(pgs);

  it("stores run ids, workflows and payloads with quotes, backslashes, spaces and unicode byte for byte", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = `r'"\\; DROP TABLE runs; -- ü 🙂 ${runId()}`;
    const workflow = `w'"\\ $1 %s 🙂`;
    const seen: number[] = [];
    b.notices.subscribe(id, (seq) => seen.push(seq));
    const text = `'"\\\\ \n\t ${"é".repeat(3)} 🙂 \u2028`;
    const stored = blob(id, { workflow, input: { text } });
    await a.save(
      stored,
      [
        {
          iid: "i'1",
          turnId: "t\\1",
          toolCallId: 'c"1',
          scope: "s'",
          answer: { delivered: true, turnComplete: false, allowed: [text] },
        },
      ],
      [],
      [event(0, text)],
    );
    expect(await a.load(id)).toEqual(stored);
    expect((await a.list({ workflow }))[0]?.runId).toBe(id);
    expect(await a.events(id, 0, 10)).toEqual([event(0, text)]);
    expect(await a.pickAnswer(id, { iid: "i'1", turnId: "t\\1", toolCallId: 'c"1' })).toMatchObject({
      answer: { delivered: true, turnComplete: false, allowed: [text] },
    });
    expect((await a.live()).map((r) => r.runId)).toContain(id);
    await eventually(() => seen.includes(0));
  });

  it("a NUL (U+0000) in a blob or an event round-trips; in a key it is refused by name and a read by it finds nothing", async () => {
    const a = await instance("A");
    const id = runId();
    const nul = "a\u0000b";
    const stored = blob(id, { input: { nul } });
    await a.save(stored, [], [], [event(0, nul)]);
    expect(await a.load(id)).toEqual(stored);
    expect(await a.events(id, 0, 10)).toEqual([event(0, nul)]);
    const refused = await refusal(
      a.save(blob(id), [
        {
          iid: "i",
          turnId: "t",
          toolCallId: nul,
          scope: "s",
          answer: { delivered: true, turnComplete: false, allowed: [] },
        },
      ]),
    );
    expect(refused.message).toMatch(/NUL \(U\+0000\)/);
    expect(await a.pickAnswer(id, { iid: "i", turnId: "t", toolCallId: nul })).toBeUndefined();
    // A request for a run id no store could hold (e.g. `GET /runs/%00`) is "not found", not a 500.
    expect(await a.load(`x${nul}`)).toBeUndefined();
    expect(await a.events(`x${nul}`, 0, 10)).toEqual([]);
    expect(await a.lastEventSeq(`x${nul}`)).toBeUndefined();
    expect(await a.list({ workflow: nul })).toEqual([]);
    expect(await a.ownership.holder(`x${nul}`)).toBeUndefined();
    expect(await a.versions(`x${nul}`)).toEqual([]);
    // The run is unharmed: the refused save committed nothing.
    expect(await a.load(id)).toEqual(stored);
    await a.save(blob(id, { updatedAt: "2026-11-30T00:00:01.000Z" }));
  });

  it("stores a 12 MB blob and a 2 MB event whole", async () => {
    const a = await instance("A");
    const id = runId();
    const big = blob(id, { input: { text: "x🙂'\\".repeat(2_000_000) } });
    const ev = event(0, "y".repeat(2_000_000));
    await a.save(big, [], [], [ev]);
    expect(await a.load(id)).toEqual(big);
    expect(await a.events(id, 0, 1)).toEqual([ev]);
  }, 30_000);

  it("many concurrent saves of one run commit in call order; saves of many runs in parallel do not deadlock", async () => {
    const a = await instance("A", { leaseMs: 20_000 });
    const b = await instance("B", { leaseMs: 20_000 });
    const id = runId();
    const at = (i: number) => `2026-11-30T00:00:00.${String(i).padStart(3, "0")}Z`;
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => a.save(blob(id, { updatedAt: at(i) }), [], [], [event(i)])),
    );
    expect((await a.load(id))?.updatedAt).toBe(at(39));
    expect((await a.versions(id)).map((v) => v.at)).toEqual(Array.from({ length: 40 }, (_, i) => at(i)));
    const ids = Array.from({ length: 30 }, () => runId());
    const work: Promise<unknown>[] = [];
    for (let round = 0; round < 4; round++)
      for (const r of ids) work.push(a.save(blob(r, { updatedAt: at(round) }), [], [], [event(round)]));
    work.push(b.ownership.adopt(["review"]), b.ownership.adopt(["review"]), a.ownership.renew());
    const results = await Promise.all(work.map((w) => outcome(w, 20_000)));
    expect(results.filter((r) => r !== "fulfilled")).toEqual([]);
    for (const r of ids) expect(a.ownership.holds(r)).toBe(true);
  }, 40_000);

  it("two instances adopting at one instant: exactly one wins, the epoch bumped once; adopt racing renew keeps every lease", async () => {
    const dead = await instance("dead");
    const ids = [runId(), runId(), runId()];
    for (const id of ids) await dead.save(blob(id));
    await dead.close();
    await sleep(LEASE_MS + 100);
    const b = await instance("B", { leaseMs: 10_000 });
    const c = await instance("C", { leaseMs: 10_000 });
    const [fromB, fromC] = await Promise.all([b.ownership.adopt(["review"]), c.ownership.adopt(["review"])]);
    for (const id of ids) {
      const winners = [fromB, fromC].filter((x) => x.adopted.some((r) => r.runId === id));
      expect(winners).toHaveLength(1);
      expect((await b.ownership.holder(id))?.epoch).toBe(2);
      expect([b.ownership.holds(id), c.ownership.holds(id)].filter(Boolean)).toHaveLength(1);
    }
    const mine = runId();
    await b.save(blob(mine));
    for (let i = 0; i < 20; i++) {
      const [renewed] = await Promise.all([b.ownership.renew(), b.ownership.adopt(["review"])]);
      expect(renewed.lost).toEqual([]);
    }
    expect((await b.ownership.holder(mine))?.epoch).toBe(1);
    expect(b.ownership.holds(mine)).toBe(true);
  });

  it("a write after the lease expired but before any adoption commits, and the adopter restores it; the old owner is fenced after", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await sleep(LEASE_MS + 100);
    expect(a.ownership.holds(id)).toBe(false);
    expect((await b.ownership.holder(id))?.expired).toBe(true);
    const late = blob(id, { updatedAt: "2026-11-30T00:00:01.000Z" });
    await a.save(late); // by design (ADR-0280 "Fence"): no one else holds it yet
    const { adopted } = await b.ownership.adopt(["review"]);
    expect(adopted.find((r) => r.runId === id)).toEqual(late);
    await expect(a.save(blob(id, { updatedAt: "2026-11-30T00:00:02.000Z" }))).rejects.toThrow(FencedError);
    expect(await b.load(id)).toEqual(late);
  });

  it("a settled run takes late rows until it is claimed again; then the old host's late rows are fenced", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    await a.save(blob(id));
    await a.save(blob(id, { status: "done", updatedAt: "2026-11-30T00:00:01.000Z" }));
    const usage = {
      iid: "i",
      submissionId: "s",
      position: "0",
      promptTokens: 1,
      cachedTokens: 0,
      completionTokens: 1,
    };
    await a.recordUsage(id, [usage]);
    await a.appendEvents(id, [event(5)]);
    await b.save(blob(id, { updatedAt: "2026-11-30T00:00:02.000Z" })); // a resume on B claims it
    await expect(a.recordUsage(id, [{ ...usage, position: "1" }])).rejects.toThrow(FencedError);
    await expect(a.appendEvents(id, [event(6)])).rejects.toThrow(FencedError);
    expect(await b.usage(id)).toEqual([usage]);
  });

  it("release() while a save of the run is queued: the save commits first, and no live lease is left behind", async () => {
    const a = await instance("A");
    const id = runId();
    await a.save(blob(id));
    const saving = a.save(blob(id, { updatedAt: "2026-11-30T00:00:01.000Z" }));
    const releasing = a.ownership.release(id);
    await Promise.allSettled([saving, releasing]);
    // Released leases expire (kept for adoption, ADR-0280 "Letting go"), never renewed again.
    expect(await a.ownership.holder(id)).toMatchObject({ instanceId: "A", expired: true });
    expect((await a.load(id))?.updatedAt).toBe("2026-11-30T00:00:01.000Z");
    expect(a.ownership.holds(id)).toBe(false);
    const renewed = await a.ownership.renew();
    expect(renewed.lost).toEqual([]);
  });

  it("never names the password: a password with `/`, a raw `%`, `%`-encoded chars, DNS and SSL failures", async () => {
    const url = new URL(pgs.db.url);
    const password = decodeURIComponent(url.password);
    const hostPort = `${url.hostname}:${url.port}`;
    const slash = `postgres://postgres:se/cr3tpw@${hostPort}/${pgs.db.name}`;
    const bad = await refusal(instance("A", {}, slash));
    expect(bad.message).toMatch(/JR2_STORE_URL/);
    expect(bad.message).not.toContain("cr3tpw");
    expect(() => parseStoreUrl(`postgres://u:pa/ss?x#y@h/db?password=${password}`)).toThrow(/JR2_STORE_URL/);
    try {
      parseStoreUrl(`postgres://u:pa/ss?x#y@h/d b?password=${password}`);
    } catch (error) {
      expect((error as Error).message).not.toContain(password);
      expect((error as Error).message).not.toContain("pa/ss");
    }
    const rawPercent = await refusal(
      instance("A", {}, `postgres://postgres:pw%zzsecret@${hostPort}/${pgs.db.name}`),
    );
    expect(rawPercent.message).toMatch(/cannot reach the run store .*28P01/);
    expect(rawPercent.message).not.toContain("zzsecret");
    const encoded = await refusal(
      instance("A", {}, `postgres://postgres:p%40ss%2Fw0rd%25x@${hostPort}/${pgs.db.name}`),
    );
    expect(encoded.message).toMatch(/password authentication failed/);
    expect(encoded.message).not.toMatch(/p@ss\/w0rd%x|p%40ss%2Fw0rd/);
    const dns = await refusal(
      instance("A", {}, `postgres://postgres:${url.password}@no-such-host.invalid:5999/${pgs.db.name}`),
    );
    expect(dns.message).toMatch(/cannot reach the run store .*ENOTFOUND/);
    expect(dns.message).not.toContain(password);
    const ssl = await refusal(instance("A", {}, `${pgs.db.url}?sslmode=require`));
    expect(ssl.message).toMatch(/cannot reach the run store .*SSL/);
    expect(ssl.message).not.toContain(password);
    expect(lines.join("\n")).not.toContain(password);
    const a = await instance("A");
    expect(JSON.stringify({ store: a.where })).not.toContain(password);
    expect(a.where.url).toBe(pgs.db.url);
  });

  it("keeps its session timeouts when JR2_STORE_URL carries its own `options` (e.g. a search_path)", async () => {
    const a = await instance("A", {}, `${pgs.db.url}?options=${encodeURIComponent("-c search_path=public")}`);
    const { rows } = await a.pool.query(
      "SELECT current_setting('idle_in_transaction_session_timeout') AS idle, current_setting('search_path') AS path",
    );
    expect(rows[0]).toEqual({ idle: "1s", path: "public" });
    await a.save(blob(runId()));
  });

  it("an open killed during its migration leaves the database to the next open", async () => {
    const fresh = await freshPgDatabase("jr2_half");
    const admin = new pg.Client(fresh.url);
    await admin.connect();
    try {
      await admin.query("SELECT pg_advisory_lock($1)", [0x6a7232]); // the next open waits in its migration
      const opening = refusal(instance("H", {}, fresh.url));
      await eventually(async () => {
        const { rows } = await admin.query(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        );
        if (rows.length === 0) return false;
        await admin.query("SELECT pg_terminate_backend($1)", [rows[0].pid]);
        return true;
      });
      expect((await opening).message).not.toBe("accepted");
      await admin.query("SELECT pg_advisory_unlock($1)", [0x6a7232]);
      const again = await instance("H", {}, fresh.url);
      await again.save(blob("h-1"));
      expect(await again.load("h-1")).toEqual(blob("h-1"));
    } finally {
      await admin.end();
      await pgs.closeAll();
      await fresh.drop();
    }
  });

  it("thousands of subscribe/unsubscribe leave no subscriber behind; a repeated unsubscribe removes nothing else", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = runId();
    let stale = 0;
    for (let i = 0; i < 5_000; i++) {
      const off = b.notices.subscribe(i % 2 === 0 ? id : `${id}-${i}`, () => stale++);
      off();
      off();
    }
    const seen: number[] = [];
    const keep = b.notices.subscribe(id, (seq) => seen.push(seq));
    const offAgain = b.notices.subscribe(id, () => stale++);
    offAgain();
    offAgain();
    await a.save(blob(id), [], [], [event(0)]);
    await eventually(() => seen.includes(0));
    await sleep(100);
    expect(stale).toBe(0);
    keep();
  });
});
