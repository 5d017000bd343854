/**
 * Outages for the PostgreSQL store suites (ADR-0280), used by postgres-outages.test.ts: a
 * throwaway cluster of a suite's own (`scripts/pg-test-cluster.sh`) to pause, kill and restart,
 * and a TCP proxy that lets a COMMIT through and then cuts the connection.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../../../scripts/pg-test-cluster.sh", import.meta.url));

/**
 * A TCP proxy to `target` that, once `armed`, forwards the next `COMMIT` and then cuts both
 * sides: the database commits, the client never hears (a crash or a network cut after commit).
 */
export async function commitCuttingProxy(
  target: URL,
): Promise<{ url: string; armed: boolean; close(): void }> {
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
export class Cluster {
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
