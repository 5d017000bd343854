/**
 * The forge link of a Repo Slot's branch (issue 28 §5, ADR-0225): an operator's URL template
 * (`JR2_FORGE_URL_TEMPLATE`, e.g. `https://git.home/{owner}/{repo}/compare/{base}...{branch}`)
 * filled from the slot's URL. Pure.
 */

/** The placeholders a template may use. */
export const FORGE_PLACEHOLDERS = ["host", "owner", "repo", "base", "branch"] as const;
type Placeholder = (typeof FORGE_PLACEHOLDERS)[number];

/** Where a repository lives on a forge, parsed from its URL. */
export interface ForgeRepo {
  /** Host name, with the port for an `https://` URL (an ssh port is no web port). */
  host: string;
  /** Owner, user or group path (`group/sub` on a forge with nested groups). */
  owner: string;
  /** The repository's name without `.git`. */
  repo: string;
}

/**
 * Checks a template: every `{…}` names a known placeholder and the result is an `http(s)://`
 * URL. Called at start, so a typo never reaches a run.
 * @returns the template
 * @throws Error naming the unknown placeholder (and the known ones), or the bad scheme
 */
export function parseForgeTemplate(template: string): string {
  for (const m of template.matchAll(/\{([^{}]*)\}/g)) {
    const name = m[1] ?? "";
    if (!(FORGE_PLACEHOLDERS as readonly string[]).includes(name))
      throw new Error(
        `JR2_FORGE_URL_TEMPLATE names the placeholder \`{${name}}\`, which jr2 does not know; use ${FORGE_PLACEHOLDERS.map((p) => `{${p}}`).join(" ")}`,
      );
  }
  if (/[{}]/.test(template.replace(/\{[a-z]+\}/g, "")))
    throw new Error(`JR2_FORGE_URL_TEMPLATE \`${template}\` has an unmatched \`{\` or \`}\``);
  const sample = fill(template, { host: "h.example", owner: "o", repo: "r", base: "b", branch: "c" });
  if (!/^https?:\/\/[^/\s]+/.test(sample) || !URL.canParse(sample))
    throw new Error(
      `JR2_FORGE_URL_TEMPLATE \`${template}\` must be an http(s) URL, e.g. https://git.home/{owner}/{repo}/compare/{base}...{branch}`,
    );
  return template;
}

/**
 * The forge repository of a remote URL: `https://host[:port]/owner/repo[.git]`,
 * `ssh://[user@]host[:port]/owner/repo[.git]`, scp-like `[user@]host:owner/repo[.git]`.
 * Credentials, query and fragment are ignored.
 * @returns the repository, or `{ reason }` saying why there is none (a local path or
 *   `file://`, an unknown form, no owner)
 */
export function forgeRepoOf(url: string): ForgeRepo | { reason: string } {
  const local = { reason: "a local repository (a path or file://) has no forge page" };
  if (url.startsWith("/") || /^file:/i.test(url)) return local;
  let host: string;
  let path: string;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === "https" || scheme === "http" || scheme === "ssh") {
    if (!URL.canParse(url)) return { reason: `\`${url}\` is not a URL jr2 can read` };
    const u = new URL(url);
    host = scheme === "ssh" ? u.hostname : u.host;
    path = decodeURIComponent(u.pathname);
  } else if (scheme !== undefined) {
    return { reason: `a \`${scheme}://\` URL has no forge page jr2 knows` };
  } else {
    const scp = /^(?:[^@/:]+@)?([^/:]+):(?!\/\/)(.+)$/.exec(url);
    if (!scp) return { reason: `\`${url}\` is neither an https://, ssh:// nor a host:path URL` };
    host = scp[1] ?? "";
    path = scp[2] ?? "";
  }
  // The host goes into the link unescaped: a name (and an https port), nothing else.
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host) && !/^\[[0-9a-fA-F:.]+\](:\d{1,5})?$/.test(host))
    return { reason: `\`${url}\` names no host jr2 can link to` };
  const parts = path.split("/").filter((p) => p !== "" && p !== "~");
  const repo = (parts.pop() ?? "").replace(/\.git$/, "");
  if (!host || !repo || parts.length === 0)
    return { reason: `\`${url}\` names no owner and repository (expected …/<owner>/<repo>)` };
  return { host, owner: parts.join("/"), repo };
}

/**
 * The link for a branch: the template filled with the slot's host, owner, repo, base (its
 * branch or tag, else the base commit) and branch, each path-escaped (slashes kept).
 * @returns `{ link }`, or `{ reason }` when the URL names no forge repository
 */
export function forgeLink(
  template: string,
  slot: { url: string; base: string; branch: string },
): { link: string } | { reason: string } {
  const repo = forgeRepoOf(slot.url);
  if ("reason" in repo) return repo;
  return { link: fill(template, { ...repo, base: slot.base, branch: slot.branch }) };
}

function fill(template: string, values: Record<Placeholder, string>): string {
  const esc = (v: string) => v.split("/").map(encodeURIComponent).join("/");
  return template.replace(/\{(host|owner|repo|base|branch)\}/g, (_m, k: Placeholder) =>
    k === "host" ? values.host : esc(values[k]),
  );
}

/** A URL with any credential and query value redacted (the Harness's rule, ADR-0213), for display. */
export function redactRepoUrl(url: string): string {
  return url
    .replace(/([?&][^=&#]*=)[^&#]*/g, "$1***")
    .replace(
      /^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i,
      (_m, scheme: string, user: string) =>
        `${scheme}${user.includes(":") ? `${user.split(":")[0]}:***` : "***"}@`,
    );
}
