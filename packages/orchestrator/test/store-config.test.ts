/**
 * Choosing the run store (ADR-0280): `JR2_STORE_URL=postgres://…` selects PostgreSQL and wins
 * over `JR2_DATA_DIR` (the log says so), `JR2_INSTANCE_ID`, `JR2_ADVERTISE_URL` and
 * `JR2_LEASE_MS` are checked naming the variable, the password never reaches a log line or an
 * error, and `jr2 store check/backup` point a PostgreSQL user at `pg_dump`.
 */
import { Writable } from "node:stream";
import { Jr2Error } from "@jr2/wire";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { storeCommands } from "../src/cli/store-commands.js";
import { openServeStore } from "../src/durability/store/open.js";
import { readServeConfig } from "../src/serve/config.js";
import { describePg, freshPgDatabase } from "./pg.js";

const token = {
  JR2_INSTANCE_TOKEN: "a-long-random-token-0123456789",
  JR2_PEER_KEY: "a-long-random-peer-key-0123456789",
};

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof Jr2Error) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "accepted";
}

describe("choosing the run store in jr2 serve's configuration (ADR-0280)", () => {
  it("selects PostgreSQL by JR2_STORE_URL, with the instance id, advertised URL and lease defaults", () => {
    for (const url of ["postgres://jr2:pw@db:5432/jr2", "postgresql://jr2@db/jr2"])
      expect(readServeConfig({ ...token, JR2_STORE_URL: url, JR2_PORT: "7411" }, {}).postgres).toEqual({
        url,
        instanceId: "http://127.0.0.1:7411",
        advertiseUrl: "http://127.0.0.1:7411",
        leaseMs: 15_000,
      });
    expect(readServeConfig(token, {}).postgres).toBeUndefined();
  });

  it("requires JR2_PEER_KEY with JR2_STORE_URL, refuses a placeholder, and checks JR2_PEERS, naming each (ADR-0281)", () => {
    const pg = { ...token, JR2_STORE_URL: "postgres://jr2:pw@db:5432/jr2" };
    const { JR2_PEER_KEY: _key, ...keyless } = pg;
    expect(refusal(() => readServeConfig(keyless, {}))).toMatch(
      /JR2_ERR_CONFIG_INVALID: .*JR2_PEER_KEY is not set/,
    );
    expect(refusal(() => readServeConfig({ ...pg, JR2_PEER_KEY: "changeme" }, {}))).toMatch(
      /JR2_PEER_KEY is the placeholder/,
    );
    expect(refusal(() => readServeConfig({ ...pg, JR2_PEERS: "http://a:7400, b:7400" }, {}))).toMatch(
      /JR2_PEERS entry `b:7400` is not an http\(s\) URL/,
    );
    expect(readServeConfig({ ...pg, JR2_PEERS: "http://a:7400, http://b:7400" }, {}).peers).toEqual({
      key: pg.JR2_PEER_KEY,
      urls: ["http://a:7400", "http://b:7400"],
    });
    // Without a shared store nothing is forwarded: no key needed.
    const { JR2_STORE_URL: _url, ...sqlite } = keyless;
    expect(readServeConfig(sqlite, {}).peers).toBeUndefined();
  });

  it("refuses JR2_PORT=0 on PostgreSQL without JR2_ADVERTISE_URL: peers could not reach it", () => {
    const env = { ...token, JR2_STORE_URL: "postgres://jr2:pw@db:5432/jr2", JR2_PORT: "0" };
    expect(refusal(() => readServeConfig(env, {}))).toMatch(/JR2_PORT=0 .*set JR2_ADVERTISE_URL/);
    expect(
      readServeConfig({ ...env, JR2_ADVERTISE_URL: "http://10.0.0.5:7400" }, {}).postgres?.advertiseUrl,
    ).toBe("http://10.0.0.5:7400");
  });

  it("reads JR2_INSTANCE_ID, JR2_ADVERTISE_URL and JR2_LEASE_MS", () => {
    const config = readServeConfig(
      {
        ...token,
        JR2_STORE_URL: "postgres://jr2:pw@db/jr2",
        JR2_INSTANCE_ID: "orchestrator-a",
        JR2_ADVERTISE_URL: "https://a.example:8443",
        JR2_LEASE_MS: "1500",
      },
      {},
    );
    expect(config.postgres).toMatchObject({
      instanceId: "orchestrator-a",
      advertiseUrl: "https://a.example:8443",
      leaseMs: 1500,
    });
  });

  it("refuses a bad lease, advertised URL or store URL, naming the variable and never the password", () => {
    for (const lease of ["0", "-5", "1.5", "soon"])
      expect(refusal(() => readServeConfig({ ...token, JR2_LEASE_MS: lease }, {}))).toMatch(
        /JR2_ERR_CONFIG_INVALID: .*JR2_LEASE_MS .* is not a positive integer/,
      );
    expect(refusal(() => readServeConfig({ ...token, JR2_LEASE_MS: "100" }, {}))).toMatch(
      /JR2_LEASE_MS `100` is below 500/,
    );
    expect(refusal(() => readServeConfig({ ...token, JR2_ADVERTISE_URL: "ftp://a" }, {}))).toMatch(
      /JR2_ADVERTISE_URL .* is not an http\(s\) URL/,
    );
    for (const url of [
      "mysql://u:hunter2secret@db/jr2",
      "postgres://u:hunter2secret@db",
      "postgres://u:hunter2secret@",
      // Found by a newcomer: the `//` forgotten, and a list as JR2_URL takes.
      "postgres:hunter2secret@127.0.0.1:5432/jr2",
      "postgres://u:pw@127.0.0.1:5432/jr2,postgres://u:hunter2secret@127.0.0.1:5432/jr2",
    ]) {
      const said = refusal(() => readServeConfig({ ...token, JR2_STORE_URL: url }, {}));
      expect(said).toMatch(/JR2_ERR_CONFIG_INVALID: .*JR2_STORE_URL/);
      expect(said).not.toContain("hunter2secret");
    }
  });
});

describe("jr2 store check/backup with a PostgreSQL store", () => {
  const saved = process.env.JR2_STORE_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.JR2_STORE_URL;
    else process.env.JR2_STORE_URL = saved;
  });

  it("says they are for the SQLite store and to use pg_dump", async () => {
    process.env.JR2_STORE_URL = "postgres://u:pw@db/jr2";
    for (const args of [["check"], ["backup", "/tmp/x.sqlite"]])
      await expect(storeCommands.store!.run(args)).rejects.toThrow(/for the SQLite store.*pg_dump/);
  });
});

describePg("opening the PostgreSQL store for jr2 serve", () => {
  it("logs the URL redacted, says JR2_STORE_URL wins over JR2_DATA_DIR, and never logs the password", async () => {
    const db = await freshPgDatabase("jr2_open");
    const lines: string[] = [];
    const log = pino(
      { level: "info" },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const password = decodeURIComponent(new URL(db.url).password);
    try {
      const store = await openServeStore(
        {
          dataDir: "/nonexistent/jr2-data",
          postgres: { url: db.url, instanceId: "A", advertiseUrl: "http://127.0.0.1:7400", leaseMs: 1500 },
        },
        log,
      );
      expect(store.ownership?.instanceId).toBe("A");
      expect(store.notices).toBeDefined();
      await store.close();
      const text = lines.join("");
      expect(text).toContain(
        "JR2_STORE_URL and JR2_DATA_DIR are both set: the PostgreSQL store (JR2_STORE_URL) is used",
      );
      expect(text).toContain(`postgres://postgres:***@127.0.0.1:${new URL(db.url).port}/${db.name}`);
      expect(text).not.toContain(password);
    } finally {
      await db.drop();
    }
  });
});
