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
  url: string;
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

/** `text` with any `user:password@` part's password replaced by `***` (for unparsable URLs too). */
export function redactUrl(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, "$1:***@");
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
  if (!URL.canParse(text)) throw bad("is not a URL");
  const url = new URL(text);
  if (!/^postgres(ql)?:$/.test(url.protocol)) throw bad("is not a postgres:// URL");
  if (!url.hostname) throw bad("names no host");
  const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!database) throw bad("names no database");
  const port = url.port || "5432";
  const user = decodeURIComponent(url.username);
  return {
    url: text,
    redacted: `${url.protocol}//${user ? `${user}${url.password ? ":***" : ""}@` : ""}${url.hostname}:${port}/${database}`,
    host: url.hostname,
    port,
    database,
  };
}

/** SQLSTATE classes and Node codes that mean the database cannot be reached or refused us. */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // A client-side query timeout leaves the session busy: it is treated as broken (destroyed).
  if (typeof code !== "string")
    return /Connection terminated|timeout exceeded when trying to connect|Query read timeout/i.test(
      String(error),
    );
  return /^(08|28|3D|57P)/.test(code) || /^E[A-Z]+$/.test(code);
}

/**
 * A connection error said with host, port, database and the fix; never the password. Other
 * errors are returned as they are.
 */
export function connectionError(where: StoreUrl, error: unknown): unknown {
  if (!isConnectionError(error)) return error;
  const raw = error instanceof Error ? error.message : String(error);
  const password = URL.canParse(where.url) ? decodeURIComponent(new URL(where.url).password) : "";
  let message = raw.split(where.url).join(where.redacted);
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
  return pool;
}

/** The config of one connection (the pool's, or the LISTEN client's). */
export function clientConfig(where: StoreUrl, settings: PoolSettings, max?: number): pg.PoolConfig {
  return {
    connectionString: where.url,
    ...(max === undefined ? {} : { max }),
    options: `-c idle_in_transaction_session_timeout=${settings.idleInTransactionMs} -c statement_timeout=${settings.statementTimeoutMs}`,
    connectionTimeoutMillis: Math.max(2_000, Math.min(settings.statementTimeoutMs, 10_000)),
    query_timeout: settings.statementTimeoutMs + 2_000,
    keepAlive: true,
    application_name: "jr2",
  };
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
    throw connectionError(where, error);
  } finally {
    client.release(broken ?? false);
  }
}

/** One query on the pool, a connection error said by {@link connectionError}. */
export async function query<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  where: StoreUrl,
  text: string,
  params: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(text, params);
  } catch (error) {
    throw connectionError(where, error);
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
