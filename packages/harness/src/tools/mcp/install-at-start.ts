/**
 * Install-at-start commands (issue 29 item 2): `npx -y pkg`, `pnpm dlx`, `bunx`, `uvx`, …
 * download a server when it starts. The run's sandbox has no network, and a Harness fetches
 * nothing at run time, so such a command is refused with the reason; install the server in the
 * image (or on the host) and name its binary.
 */
const INSTALLERS: ReadonlyArray<{ test: (argv: readonly string[]) => boolean; form: string }> = [
  { test: (a) => base(a[0]) === "npx", form: "npx" },
  { test: (a) => base(a[0]) === "bunx", form: "bunx" },
  { test: (a) => base(a[0]) === "uvx", form: "uvx" },
  { test: (a) => base(a[0]) === "pnpx", form: "pnpx" },
  { test: (a) => ["pnpm", "yarn", "bun"].includes(base(a[0])) && a[1] === "dlx", form: "<pm> dlx" },
  { test: (a) => base(a[0]) === "npm" && (a[1] === "exec" || a[1] === "x"), form: "npm exec" },
  { test: (a) => base(a[0]) === "pipx" && a[1] === "run", form: "pipx run" },
  { test: (a) => base(a[0]) === "uv" && a[1] === "tool" && a[2] === "run", form: "uv tool run" },
  {
    test: (a) => base(a[0]) === "deno" && a.some((x) => /^(npm|jsr|https?):/.test(x)),
    form: "deno npm:/jsr:/URL",
  },
];

function base(cmd: string | undefined): string {
  return (cmd ?? "").split("/").pop() ?? "";
}

/**
 * Why `command args` installs at start, or `undefined` when it runs what is installed.
 * @example installAtStartProblem("npx", ["-y", "@modelcontextprotocol/server-everything"])
 */
export function installAtStartProblem(command: string, args: readonly string[] = []): string | undefined {
  const argv = [command, ...args];
  const hit = INSTALLERS.find((i) => i.test(argv));
  if (!hit) return undefined;
  return (
    `\`${argv.join(" ")}\` installs the server when it starts (${hit.form}); the run's sandbox has no network ` +
    "and the Harness fetches nothing at run time. Install the server in the image or on the host and give its binary as `command`"
  );
}
