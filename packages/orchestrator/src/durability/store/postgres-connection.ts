/**
 * The PostgreSQL store's connections (ADR-0280): `JR2_STORE_URL` parsed and redacted (the
 * password is never logged nor put in an error), the pool with its session settings
 * (`idle_in_transaction_session_timeout`, so a paused process cannot hold a row lock past its
 * lease; `statement_timeout`; a client-side query timeout, so a dead connection rejects
 * instead of hanging), connection errors said with host, port, database and the fix, and the
 * transaction and multi-row insert helpers the store's parts share.
 * @see SPEC §8
 */
import pg from "pg";

/** What a part of the store runs SQL on: a pooled client inside a transaction, or the pool. */
export type Sql = Pick<pg.ClientBase, "query">;

/** A parsed store URL: what errors and logs may name (never the password). */
export interface StoreUrl {
  /** The URL as given, password included: not enumerable (JSON and log lines leave it out). */
  readonly url: string;
  /** `postgres://user:***@host:port/db`. */
  redacted: string;
  host: string;
  port: string;
  database: string;
}

/** True when `text` names a PostgreSQL store (`postgres://` or `postgresql://`). */
export function isPostgresUrl(text: string | undefined): text is string {
  return text !== undefined && /^postgres(ql)?:\/\//i.test(text.trim());
}

/**
 * `text` with any `user:password@` part's password and any `password=` parameter replaced by
 * `***` (for unparsable URLs too). The password runs to the LAST `@`: one holding `/`, `?`,
 * `#` or `@` unencoded is what makes a URL unparsable, so it is redacted whole.
 */
export function redactUrl(text: string): string {
  return (
    text
      .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):.*@/i, "$1:***@")
      // `postgres:pw@host/db` (the `//` forgotten): everything before the last `@` may be the password.
      .replace(/^([a-z][a-z0-9+.-]*:)(?!\/\/)[^@]*@/i, "$1***@")
      .replace(/([?&]password=)[^&]*/gi, "$1***")
  );
}

/** `decodeURIComponent(text)`, or `text` itself when it holds a `%` that is no escape. */
function decodeLoosely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Parses `JR2_STORE_URL`.
 * @throws Error naming `JR2_STORE_URL` (redacted) and the expected form
 */
export function parseStoreUrl(text: string): StoreUrl {
  const bad = (why: string) =>
    new Error(
      `JR2_STORE_URL \`${redactUrl(text)}\` ${why}: expected postgres://user:password@host:port/database`,
    );
  // A list (as JR2_URL takes) would put the second URL, password and all, into the database name.
  if (text.includes(","))
    throw bad("holds a comma: it takes one URL, not a list (percent-encode a comma in the password as %2C)");
  if (!/^postgres(ql)?:\/\//i.test(text)) throw bad("is not a postgres:// URL");
  if (!URL.canParse(text)) throw bad("is not a URL");
  const url = new URL(text);
  if (!/^postgres(ql)?:$/.test(url.protocol)) throw bad("is not a postgres:// URL");
  if (!url.hostname) throw bad("names no host");
  const database = decodeLoosely(url.pathname.replace(/^\//, ""));
  if (!database) throw bad("names no database");
  const port = url.port || "5432";
  const user = decodeLoosely(url.username);
  const parsed = {
    redacted: `${url.protocol}//${user ? `${user}${url.password ? ":***" : ""}@` : ""}${url.hostname}:${port}/${database}`,
    host: url.hostname,
    port,
    database,
  };
  // Not enumerable: a log line or JSON of the parsed URL (`{ store: store.where }`) never holds it.
  return Object.defineProperty(parsed, "url", { value: text, enumerable: false }) as StoreUrl;
}

/**
 * SQLSTATE classes and Node codes that mean the database cannot be reached or refused us; TLS
 * and SASL failures (node-postgres throws them without a code) are said the same way.
 */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // A client-side query timeout leaves the session busy: it is treated as broken (destroyed).
  if (typeof code !== "string")
    return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|SSL|SASL/i.test(
      String(error),
    );
  return (
    /^(08|28|3D|57P)/.test(code) || /^E[A-Z]+$/.test(code) || /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO)/.test(code)
  );
}

/** PostgreSQL's refusal of a NUL (U+0000) in a text parameter (SQLSTATE 22021). */
function isNulRefusal(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return e?.code === "22021" && /0x00/.test(String(e.message));
}

/**
 * The error a store operation throws: a connection error said by {@link connectionError}, a
 * NUL in a key said by name (ADR-0280 "NUL"), any other as it is.
 */
export function storeError(where: StoreUrl, error: unknown): unknown {
  if (isNulRefusal(error))
    return new Error(
      "the PostgreSQL run store cannot hold a NUL (U+0000) in a run id, workflow, iid, turnId, toolCallId, " +
        "submissionId, position, scope or event type (PostgreSQL text has no NUL; SQLite's store does): " +
        "nothing of the write was committed. Blobs, events, answers and transcripts are JSON and keep NUL (ADR-0280)",
      { cause: error },
    );
  return connectionError(where, error);
}

/**
 * True when a string in `params` (or in an array among them) holds a NUL: no row of the store
 * can match it (PostgreSQL text holds none), so a read or delete keyed by it finds nothing
 * instead of failing (`GET /runs/%00` is a 404, not a 500).
 */
export function matchesNothing(params: readonly unknown[]): boolean {
  return params.some((p) =>
    typeof p === "string" ? p.includes("\u0000") : Array.isArray(p) && matchesNothing(p),
  );
}

/**
 * A connection error said with host, port, database and the fix; never the password. Other
 * errors are returned as they are.
 */
export function connectionError(where: StoreUrl, error: unknown): unknown {
  if (!isConnectionError(error)) return error;
  const raw = error instanceof Error ? error.message : String(error);
  const encoded = URL.canParse(where.url) ? new URL(where.url).password : "";
  let message = raw.split(where.url).join(where.redacted);
  for (const password of [encoded, decodeLoosely(encoded)])
    if (password) message = message.split(password).join("***");
  const code = (error as { code?: unknown }).code;
  return new Error(
    `cannot reach the run store ${where.redacted} (host ${where.host}, port ${where.port}, database ${where.database}): ` +
      `${message}${typeof code === "string" ? ` (${code})` : ""}. Check that PostgreSQL runs there, that the ` +
      "database exists (CREATE DATABASE), and that JR2_STORE_URL's user and password are right",
    { cause: error },
  );
}

/** Session and pool settings (ADR-0280). */
export interface PoolSettings {
  /** `idle_in_transaction_session_timeout`, ms (≈ the lease). */
  idleInTransactionMs: number;
  /** `statement_timeout`, ms. */
  statementTimeoutMs: number;
  /** Connections at most. */
  max?: number;
}

/** The pool: session settings sent at connect, a connect timeout, and a client-side query timeout. */
export function createPool(
  where: StoreUrl,
  settings: PoolSettings,
  onError: (error: unknown) => void,
): pg.Pool {
  const pool = new pg.Pool(clientConfig(where, settings, settings.max ?? 10));
  // An idle client's error (the server went away) must not crash the process; the next query reports it.
  pool.on("error", (error) => onError(connectionError(where, error)));
  // node-postgres emits `error` on a checked-out client too (the server died mid-transaction):
  // without a listener that is an uncaught exception. The query it fails reports it.
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/** The config of one connection (the pool's, or the LISTEN client's). */
export function clientConfig(where: StoreUrl, settings: PoolSettings, max?: number): pg.PoolConfig {
  const ours = `-c idle_in_transaction_session_timeout=${settings.idleInTransactionMs} -c statement_timeout=${settings.statementTimeoutMs}`;
  const { connectionString, options } = withOptions(where.url, ours);
  return {
    connectionString,
    ...(max === undefined ? {} : { max }),
    options,
    connectionTimeoutMillis: Math.max(2_000, Math.min(settings.statementTimeoutMs, 10_000)),
    query_timeout: settings.statementTimeoutMs + 2_000,
    // Probes start after 10 s idle (the OS default is 2 h): a LISTEN connection to a host that
    // vanished without a FIN is found dead and reopened, instead of waiting for notices forever.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: "jr2",
  };
}

/**
 * The URL and startup `options` of a session: node-postgres lets the URL's `?options=` replace
 * the config's, which would drop the timeouts the fence relies on. The URL's own options are
 * moved out of it and sent first, ours after them (the last `-c` of a setting wins).
 */
function withOptions(url: string, ours: string): { connectionString: string; options: string } {
  if (!/[?&]options=/.test(url) || !URL.canParse(url)) return { connectionString: url, options: ours };
  const parsed = new URL(url);
  const theirs = parsed.searchParams.get("options") ?? "";
  parsed.searchParams.delete("options");
  return { connectionString: parsed.toString(), options: `${theirs} ${ours}`.trim() };
}

/**
 * Runs `body` in a transaction on one pooled client: COMMIT when it resolves, ROLLBACK when it
 * throws (and the error is rethrown, a connection error said by {@link connectionError}). A
 * client whose connection failed is destroyed, not returned to the pool.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  where: StoreUrl,
  body: (sql: Sql) => Promise<T>,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw connectionError(where, error);
  }
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await body(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    if (isConnectionError(error)) broken = error as Error;
    else await client.query("ROLLBACK").catch((e: unknown) => (broken = e as Error));
    throw storeError(where, error);
  } finally {
    client.release(broken ?? false);
  }
}

/**
 * One query on the pool, an error said by {@link storeError}; keyed by a NUL it finds nothing
 * without asking ({@link matchesNothing}).
 */
export async function query<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  where: StoreUrl,
  text: string,
  params: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  if (matchesNothing(params)) return { rows: [], rowCount: 0, command: "", oid: 0, fields: [] };
  try {
    return await pool.query<R>(text, params);
  } catch (error) {
    throw storeError(where, error);
  }
}

/**
 * Inserts `rows` (each `width` values) with `INSERT … VALUES (…), (…) <suffix>`, in chunks
 * under PostgreSQL's parameter limit. Returns the rows affected.
 */
export async function insertMany(
  sql: Sql,
  head: string,
  width: number,
  rows: readonly unknown[][],
  suffix = "ON CONFLICT DO NOTHING",
): Promise<number> {
  let count = 0;
  const chunk = Math.floor(30_000 / width);
  for (let start = 0; start < rows.length; start += chunk) {
    const part = rows.slice(start, start + chunk);
    const values = part
      .map((_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`)
      .join(", ");
    const result = await sql.query(`${head} VALUES ${values} ${suffix}`, part.flat());
    count += result.rowCount ?? 0;
  }
  return count;
}
