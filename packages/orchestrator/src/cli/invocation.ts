/**
 * How the user ran the CLI, so the commands its hints print can be pasted as they are: `pnpm jr2`
 * when run as the repo's `jr2` script (`pnpm jr2 …`, `pnpm -s jr2 …`: the README's way; pnpm sets
 * `npm_lifecycle_event` to the script's name) or by `pnpm start --run` (whose user goes on with
 * `pnpm jr2`), else `jr2` (the package's bin, `node …/main.js`, the images' `jr2`).
 * `JR2_CLI_INVOKED_AS`, when set, is taken as it is (`start.mjs --run` sets `pnpm jr2`: the
 * quickstart runs it by node, where pnpm sets no lifecycle event).
 */
export function invokedAs(env: NodeJS.ProcessEnv = process.env): string {
  if (env.JR2_CLI_INVOKED_AS) return env.JR2_CLI_INVOKED_AS;
  return env.npm_lifecycle_event === "jr2" || env.npm_lifecycle_event === "start" ? "pnpm jr2" : "jr2";
}

/** The CLI's name as the user runs it (`pnpm jr2` or `jr2`), read once at start. */
export const JR2: string = invokedAs();

/**
 * `text` with each command it quotes as `` `jr2 …` `` said as the user runs the CLI
 * (`` `pnpm jr2 …` `` under `pnpm jr2`): the Orchestrator's error messages (JR2_ERR_RUN_VERSION_NOT_FOUND's
 * `` `jr2 history <run>` ``, JR2_ERR_RUN_STATUS_CHANGED's `` `jr2 show <run>` ``, …) and the store's
 * are written for the bin, and the CLI prints them as they came. Only a backquoted `jr2 ` is
 * changed (never a `jr2` inside a word or a path); applying it twice changes nothing. Pure.
 * @param as - the CLI's name as run ({@link JR2})
 */
export function asInvoked(text: string, as: string = JR2): string {
  return as === "jr2" ? text : text.replaceAll("`jr2 ", `\`${as} `);
}
