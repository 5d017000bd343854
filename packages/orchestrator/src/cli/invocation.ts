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
