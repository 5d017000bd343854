/**
 * Run leases with a fencing epoch on PostgreSQL (ADR-0280): the `run_leases` row per `running`
 * run (owner id, owner URL, epoch, `expires_at` by the database's `now()`), this instance's
 * view of the leases it holds, and the fence every write transaction of a run begins with.
 * - claim: the first save of a run with no lease row inserts one (epoch 1) in its transaction;
 *   a live row naming this instance id (a claim whose commit's answer was lost) is taken, epoch + 1;
 * - fence: `SELECT … FOR SHARE` of the row with our owner id and epoch; none is FencedError
 *   (the row lock makes an adoption wait for a write under way, so a write commits first or
 *   is refused);
 * - a save of a settled blob deletes the row in its transaction;
 * - renew (the owner URL written again too), adopt, holder, release (the row expired, kept): one statement each.
 * `holds()` needs no I/O: a lease is held until `leaseMs` after the renewal (or claim) that last
 * confirmed it was SENT, by `performance.now()`, so never past the database's expiry.
 * @see SPEC §8
 */
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { FencedError, type LeaseHolder, type RunOwnership } from "./ownership.js";
import { query, type Sql, type StoreUrl } from "./postgres-connection.js";
import { DamagedRunError, decodeRunBlob, type RunBlob } from "./run-store.js";

/** One lease this instance holds: its epoch and until when (performance.now() ms) it counts as held. */
interface Held {
  epoch: number;
  validUntil: number;
  /** A save settling the run is under way: its row's disappearance is not a loss. */
  settling?: boolean;
}

/**
 * What a fenced write does once its transaction ended: `committed` records a claim or forgets
 * a settled run; `failed` (rolled back, or the outcome unknown) undoes what was marked.
 */
export interface AfterCommit {
  committed(): void;
  failed(): void;
}

const NOTHING: AfterCommit = { committed() {}, failed() {} };

/** What {@link RunOwnership.adopt} returns on PostgreSQL: also the adopted runs whose blob is damaged. */
export interface PostgresAdoption {
  adopted: RunBlob[];
  /** Adopted runs whose stored blob cannot be decoded (restore reports them faulted, as at a restart). */
  damaged: { runId: string; reason: string }[];
}

/** The leases of one instance, plus what the store's write transactions call. */
export interface PostgresLeases extends RunOwnership {
  adopt(workflows: readonly string[]): Promise<PostgresAdoption>;
  /**
   * The first statement of every write transaction of `runId`: the fence (held), the claim
   * (`claim`: a save of a running blob of a run with no lease row), or — a run this instance
   * does not hold — a check that no instance holds it.
   * @throws FencedError when the run's lease is not this instance's (nothing was written)
   */
  fence(sql: Sql, runId: string, claim: boolean, sentAt: number): Promise<AfterCommit>;
  /** In a settling save's transaction, after the fence: deletes the run's lease row. */
  settle(sql: Sql, runId: string): Promise<AfterCommit>;
}

/** How the leases are set up. */
export interface LeaseOptions {
  instanceId: string;
  advertiseUrl: string;
  leaseMs: number;
}

/** The leases over `pool` (migrated already). */
export function postgresLeases(pool: pg.Pool, where: StoreUrl, options: LeaseOptions): PostgresLeases {
  const { instanceId, advertiseUrl, leaseMs } = options;
  const held = new Map<string, Held>();
  // Claims under way: adoption leaves them alone (the claiming save is this process's own).
  const claiming = new Set<string>();
  // Only this process's first adoption (its start-up restore) takes over unexpired leases of
  // its own id: those are an earlier process's. Later, such a row is another live process's
  // given the same JR2_INSTANCE_ID; re-taking it would move the run back and forth each tick.
  let restored = false;
  // Runs this process let go of, and when (performance.now() ms): not adopted again within one
  // lease length (ADR-0283) — a peer that holds the run renews it meanwhile; a row that stays
  // expired that long is nobody's, and is taken then.
  const letGoAt = new Map<string, number>();
  const backingOff = (now: number) => {
    for (const [runId, at] of letGoAt) if (now - at >= leaseMs) letGoAt.delete(runId);
    return [...letGoAt.keys()];
  };
  const expiry = (n: number) => `now() + $${n}::double precision * interval '1 millisecond'`;
  const forget = (runId: string, epoch: number) => {
    if (held.get(runId)?.epoch === epoch) held.delete(runId);
  };
  // Giving a lease back expires its row, never deletes it: a running run without a lease row
  // reads as settled (answered from the store, its Turns "not found" — a Harness would abandon
  // them) until adopted, and an adopter bumps the epoch instead of starting again at 1.
  const release = async (runId: string) => {
    letGoAt.set(runId, performance.now());
    const mine = held.get(runId);
    if (!mine) return;
    held.delete(runId);
    await query(
      pool,
      where,
      "UPDATE run_leases SET expires_at = now() WHERE run_id = $1 AND owner_id = $2 AND epoch = $3",
      [runId, instanceId, mine.epoch],
    );
  };
  /** Deletes the lease row of a run found settled at adoption (rows exist for running runs only). */
  const drop = async (runId: string) => {
    const mine = held.get(runId);
    if (!mine) return;
    held.delete(runId);
    await query(pool, where, "DELETE FROM run_leases WHERE run_id = $1 AND owner_id = $2 AND epoch = $3", [
      runId,
      instanceId,
      mine.epoch,
    ]);
  };

  return {
    instanceId,
    advertiseUrl,
    leaseMs,

    async fence(sql, runId, claim, sentAt) {
      const mine = held.get(runId);
      if (mine) {
        const { rowCount } = await sql.query(
          "SELECT 1 FROM run_leases WHERE run_id = $1 AND owner_id = $2 AND epoch = $3 FOR SHARE",
          [runId, instanceId, mine.epoch],
        );
        if (rowCount === 0) {
          forget(runId, mine.epoch);
          throw new FencedError(runId, mine.epoch);
        }
        return NOTHING;
      }
      if (claim) {
        claiming.add(runId);
        try {
          // A live row naming this instance id is its own (a claim whose commit's answer was
          // lost): taken with a bumped epoch. An expired one (relinquished, or left past its
          // lease) is adoption's to hand out, so the claim is fenced.
          const { rows } = await sql.query<{ epoch: string }>(
            `INSERT INTO run_leases (run_id, owner_id, owner_url, epoch, expires_at)
             VALUES ($1, $2, $3, 1, ${expiry(4)})
             ON CONFLICT (run_id) DO UPDATE SET owner_url = excluded.owner_url,
               epoch = run_leases.epoch + 1, expires_at = excluded.expires_at
             WHERE run_leases.owner_id = excluded.owner_id AND run_leases.expires_at >= now()
             RETURNING epoch`,
            [runId, instanceId, advertiseUrl, leaseMs],
          );
          if (rows.length === 0) throw new FencedError(runId, undefined);
          const epoch = Number(rows[0]!.epoch);
          return {
            committed() {
              claiming.delete(runId);
              held.set(runId, { epoch, validUntil: sentAt + leaseMs });
            },
            failed: () => claiming.delete(runId),
          };
        } catch (error) {
          claiming.delete(runId);
          throw error;
        }
      }
      const { rowCount } = await sql.query("SELECT 1 FROM run_leases WHERE run_id = $1 FOR SHARE", [runId]);
      if (rowCount !== 0) throw new FencedError(runId, undefined);
      return NOTHING;
    },

    async settle(sql, runId) {
      const mine = held.get(runId);
      if (mine) mine.settling = true;
      const done = () => {
        if (mine) mine.settling = false;
      };
      try {
        await sql.query("DELETE FROM run_leases WHERE run_id = $1", [runId]);
      } catch (error) {
        done();
        throw error;
      }
      return {
        committed: () => mine && forget(runId, mine.epoch),
        failed: done,
      };
    },

    async renew() {
      const sentAt = performance.now();
      const sent = [...held.entries()].map(([runId, h]) => ({ runId, epoch: h.epoch }));
      if (sent.length === 0) return { lost: [] };
      const { rows } = await query<{ run_id: string; epoch: string }>(
        pool,
        where,
        // The owner's URL is written again on every renewal (ADR-0281): a row rewritten by
        // anyone else names this instance's own URL again within a third of a lease.
        `UPDATE run_leases SET expires_at = ${expiry(2)}, owner_url = $5
         WHERE owner_id = $1 AND (run_id, epoch) IN (SELECT * FROM unnest($3::text[], $4::bigint[]))
         RETURNING run_id, epoch`,
        [instanceId, leaseMs, sent.map((s) => s.runId), sent.map((s) => s.epoch), advertiseUrl],
      );
      const renewed = new Map(rows.map((r) => [r.run_id, Number(r.epoch)]));
      const lost: string[] = [];
      for (const { runId, epoch } of sent) {
        const now = held.get(runId);
        if (now?.epoch !== epoch) continue; // settled, released or claimed anew meanwhile
        if (renewed.get(runId) === epoch) now.validUntil = Math.max(now.validUntil, sentAt + leaseMs);
        else if (!now.settling) {
          held.delete(runId);
          lost.push(runId);
        }
      }
      return { lost };
    },

    async adopt(workflows) {
      if (workflows.length === 0) return { adopted: [], damaged: [] };
      const sentAt = performance.now();
      const mine = [...new Set([...held.keys(), ...claiming, ...backingOff(sentAt)])];
      const { rows } = await query<{ run_id: string; epoch: string }>(
        pool,
        where,
        `INSERT INTO run_leases (run_id, owner_id, owner_url, epoch, expires_at)
         SELECT r.run_id, $1, $2, 1, ${expiry(3)}
         FROM runs r LEFT JOIN run_leases l ON l.run_id = r.run_id
         WHERE r.status = 'running' AND r.workflow = ANY($4::text[]) AND NOT (r.run_id = ANY($5::text[]))
           AND (l.run_id IS NULL OR l.expires_at < now() OR ($6::boolean AND l.owner_id = $1))
         ON CONFLICT (run_id) DO UPDATE SET owner_id = excluded.owner_id, owner_url = excluded.owner_url,
           epoch = run_leases.epoch + 1, expires_at = excluded.expires_at
         WHERE run_leases.expires_at < now() OR ($6::boolean AND run_leases.owner_id = excluded.owner_id)
         RETURNING run_id, epoch`,
        [instanceId, advertiseUrl, leaseMs, [...workflows], mine, !restored],
      );
      restored = true;
      for (const r of rows) held.set(r.run_id, { epoch: Number(r.epoch), validUntil: sentAt + leaseMs });
      const adoption = await readAdopted(
        pool,
        where,
        rows.map((r) => r.run_id),
      );
      // A save that settled the run committed while the claim waited for its row lock: not ours
      // to host (lease rows exist only for running runs).
      for (const settled of adoption.adopted.filter((b) => b.status !== "running")) await drop(settled.runId);
      return { ...adoption, adopted: adoption.adopted.filter((b) => b.status === "running") };
    },

    holds(runId) {
      const mine = held.get(runId);
      return mine !== undefined && performance.now() < mine.validUntil;
    },

    async holder(runId): Promise<LeaseHolder | undefined> {
      const { rows } = await query<{
        owner_id: string;
        owner_url: string;
        epoch: string;
        expires_at: Date;
        expired: boolean;
      }>(
        pool,
        where,
        "SELECT owner_id, owner_url, epoch, expires_at, expires_at < now() AS expired FROM run_leases WHERE run_id = $1",
        [runId],
      );
      const row = rows[0];
      if (!row) return undefined;
      return {
        runId,
        instanceId: row.owner_id,
        url: row.owner_url,
        epoch: Number(row.epoch),
        expiresAt: row.expires_at.toISOString(),
        expired: row.expired,
      };
    },

    release,

    async relinquish() {
      const runIds = [...held.keys()];
      held.clear();
      if (runIds.length === 0) return;
      await query(
        pool,
        where,
        "UPDATE run_leases SET expires_at = now() WHERE owner_id = $1 AND run_id = ANY($2::text[])",
        [instanceId, runIds],
      );
    },
  };
}

/** The adopted runs' blobs, read after the claim committed; a damaged one is reported, not thrown. */
async function readAdopted(pool: pg.Pool, where: StoreUrl, runIds: string[]): Promise<PostgresAdoption> {
  if (runIds.length === 0) return { adopted: [], damaged: [] };
  const { rows } = await query<{ run_id: string; blob: string }>(
    pool,
    where,
    "SELECT run_id, blob FROM runs WHERE run_id = ANY($1::text[]) ORDER BY run_id",
    [runIds],
  );
  const adoption: PostgresAdoption = { adopted: [], damaged: [] };
  for (const r of rows) {
    try {
      adoption.adopted.push(decodeRunBlob(r.run_id, r.blob));
    } catch (error) {
      if (!(error instanceof DamagedRunError)) throw error;
      adoption.damaged.push({ runId: r.run_id, reason: error.message });
    }
  }
  return adoption;
}
