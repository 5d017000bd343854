import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Jr2Error } from "@jr2/wire";
import { backupStore, checkStore } from "../durability/store/maintenance.js";
import { isPostgresUrl } from "../durability/store/postgres-connection.js";
import { STORE_FILE } from "../durability/store/sqlite.js";
import { JR2 } from "./invocation.js";

/** A `jr2` command: usage line and body (exit code). */
interface Command {
  usage: string;
  run(args: string[]): Promise<number>;
}

const usage = `${JR2} store check [--data-dir DIR | --file FILE]  |  ${JR2} store backup <file> [--data-dir DIR]`;

/**
 * The store file: `--file`, else `<--data-dir, JR2_DATA_DIR or ./.data>/jr2.sqlite` — the same
 * default data dir as the other commands (`pnpm start` writes there). With `JR2_STORE_URL` naming
 * PostgreSQL (and no --data-dir or --file) it refuses, pointing at `pg_dump`.
 * @throws Jr2Error `JR2_ERR_CONFIG_INVALID` when only the default was tried and it holds no store,
 *   or the store is PostgreSQL
 */
function storePath(values: { "data-dir"?: string | undefined; file?: string | undefined }): string {
  if (values.file) return values.file;
  if (values["data-dir"] === undefined && isPostgresUrl(process.env.JR2_STORE_URL))
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail:
        `JR2_STORE_URL names a PostgreSQL store: \`${JR2} store check\` and \`${JR2} store backup\` are for the SQLite store. ` +
        "Back up PostgreSQL with its own tools (`pg_dump --format=custom`; restore with `pg_restore`), " +
        "or pass --data-dir DIR / --file FILE for a SQLite store",
    });
  const given = values["data-dir"] ?? process.env.JR2_DATA_DIR;
  const path = join(given ?? ".data", STORE_FILE);
  if (given === undefined && !existsSync(path))
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: `no store at ${path} (the default data dir): pass --data-dir DIR (or set JR2_DATA_DIR), or --file FILE`,
    });
  return path;
}

/**
 * `jr2 store check` (exit 0: sound, 1: damaged) and `jr2 store backup <file>` (online, mode
 * 0600). Both read the store without changing it, also while `jr2 serve` runs.
 * @see README "Backing up the store", ADR-0254
 */
export const storeCommands: Record<string, Command> = {
  store: {
    usage,
    async run(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { "data-dir": { type: "string" }, file: { type: "string" } },
        strict: true,
      });
      const [sub, target] = positionals;
      if (sub === "check") {
        const report = checkStore(storePath(values));
        const sound = report.integrity.length === 1 && report.integrity[0] === "ok";
        process.stdout.write(
          `store ${report.path}: ${sound ? "integrity ok" : `integrity FAILED:\n  ${report.integrity.join("\n  ")}`}\n` +
            `${report.runs} runs (${report.live} live), ${report.damaged.length} damaged\n`,
        );
        for (const d of report.damaged) process.stdout.write(`  damaged ${d.reason}\n`);
        if (!report.ok)
          process.stdout.write(
            'restore a backup (see README "Backing up the store"); a damaged run\'s row is kept as it is and reported faulted\n',
          );
        return report.ok ? 0 : 1;
      }
      if (sub === "backup") {
        if (!target)
          throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
            detail: `missing <file>: ${JR2} store backup <file>`,
          });
        const from = storePath(values);
        const { runs } = await backupStore(from, target);
        process.stdout.write(`backed up ${runs} runs from ${from} to ${target} (mode 0600)\n`);
        return 0;
      }
      throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
        detail: `unknown store command \`${sub ?? ""}\`; ${usage}`,
      });
    },
  },
};
