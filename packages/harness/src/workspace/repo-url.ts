import { realpathSync } from "node:fs";
import { isAbsolute, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { CREDENTIAL_PARAM, Jr2Error } from "@jr2/wire";
import { unusableRepoRoots } from "./workspace-config.js";

/** A Repo Slot's URL once accepted: what git is handed, and whether it is on this node. */
export interface AcceptedUrl {
  /** What git fetches from: the URL itself, or the local path (real, absolute). */
  source: string;
  kind: "https" | "ssh" | "local";
}

/** Which field of which Repo Slot a URL came from: named in a refusal, so the user knows what to fix. */
export interface UrlField {
  slot: string;
  field: "url" | "pushUrl";
}

/** The roots and the work root the URL rules read (issue 28 §1). */
export interface UrlRules {
  /** `JR2_REPO_ROOTS`: absolute directories local repositories may live under. */
  repoRoots: readonly string[];
  /** `JR2_WORK_ROOT`: nothing under it is ever a Repo Slot's source. */
  workRoot: string;
}

/**
 * Accepts or refuses a Repo Slot's URL (issue 28 §1 and "Hardened git"). Accepted: `https://`
 * and `ssh://` (or scp-like `user@host:path`) remotes, and a local path or `file://` URL whose
 * real path (symlinks followed) lies under one of `JR2_REPO_ROOTS`. Refused, each naming its
 * rule: `ext::` and any other `<transport>::` form (`command-transport`), `http://`, `git://`
 * and unknown schemes (`scheme`), credentials in the URL (`credentials-in-url`: a password, an
 * https user, or a credential-like query parameter such as `access_token=`; name a token file
 * instead), whitespace in an https or ssh URL (`whitespace`), a backslash in one (`backslash`: git and
 * the URL parser would read different hosts), a local path not under a listed root (`repo-roots`), anything under the work
 * root (`work-root`: another run's repository), an option-looking URL (`option`).
 * @param at the slot and the field (`url` or `pushUrl`) the URL came from, named in a refusal
 * @throws Jr2Error `JR2_ERR_WORKSPACE_URL_REFUSED` `{ slot, field, url, rule, fix }`
 */
export function acceptUrl(url: string, rules: UrlRules, at: UrlField): AcceptedUrl {
  const refuse = (rule: string, fix: string): never => {
    throw new Jr2Error("JR2_ERR_WORKSPACE_URL_REFUSED", { ...at, url: redactUrl(url), rule, fix });
  };
  if (typeof url !== "string" || url.trim() === "") refuse("empty", "give the repository's URL");
  if (url.startsWith("-")) refuse("option", "a URL never starts with `-`");
  if (/[\0\n\r]/.test(url)) refuse("control-characters", "remove control characters from the URL");
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url))
    refuse(
      "command-transport",
      "`<transport>::` runs a program (protocol.ext.allow=never); use https:// or ssh://",
    );
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === "https" || scheme === "ssh") {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return refuse("malformed", "give a well-formed URL");
    }
    if (/\s/.test(url))
      refuse("whitespace", "remove the spaces or tabs from the URL (percent-encode a space as %20)");
    // `https://a\@b/` is host `a` to the URL parser and host `b` to git (the adversary, session
    // 10): the host checked must be the host contacted, so a backslash is refused.
    if (url.includes("\\"))
      refuse("backslash", "remove the backslash from the URL (percent-encode one in a path as %5C)");
    const secret = [...parsed.searchParams.keys()].find((k) => CREDENTIAL_PARAM.test(k));
    if (secret !== undefined)
      refuse(
        "credentials-in-url",
        `remove the \`${secret}=\` query parameter from the URL; name a credential file (JR2_GIT_TOKEN_FILE)`,
      );
    if (parsed.password)
      refuse(
        "credentials-in-url",
        "remove the password or token from the URL; name a credential file (JR2_GIT_TOKEN_FILE)",
      );
    if (scheme === "https" && parsed.username)
      refuse(
        "credentials-in-url",
        "remove the user from the URL; name a credential file (JR2_GIT_TOKEN_FILE)",
      );
    return { source: url, kind: scheme };
  }
  if (scheme === "file") {
    let path: string;
    try {
      path = fileURLToPath(url);
    } catch {
      return refuse("malformed", "give a file:// URL with an absolute path");
    }
    return { source: localUnderRoots(path, url, rules, refuse), kind: "local" };
  }
  if (scheme !== undefined)
    refuse(
      "scheme",
      `\`${scheme}://\` is not accepted; use https://, ssh://, or a local path under JR2_REPO_ROOTS`,
    );
  // scp-like ssh: `user@host:path` (a colon before any slash, not a Windows drive letter).
  if (/^[^/:]+@[^/:]+:/.test(url) || /^[A-Za-z0-9.-]+:[^/]/.test(url)) return { source: url, kind: "ssh" };
  if (!isAbsolute(url)) refuse("relative-path", "give an absolute local path, under one of JR2_REPO_ROOTS");
  return { source: localUnderRoots(url, url, rules, refuse), kind: "local" };
}

function localUnderRoots(
  path: string,
  url: string,
  rules: UrlRules,
  refuse: (rule: string, fix: string) => never,
): string {
  let real: string;
  try {
    real = realpathSync(normalize(path));
  } catch {
    return refuse("not-found", `no repository at \`${path}\`; create it or fix the path`);
  }
  const workRoot = realOr(rules.workRoot);
  if (under(real, workRoot))
    refuse(
      "work-root",
      `\`${url}\` is under JR2_WORK_ROOT (${rules.workRoot}), where runs' repositories live; point at the user's repository`,
    );
  const roots = rules.repoRoots.map(realOr);
  if (!roots.some((root) => under(real, root))) {
    // A listed root that is not there (a typo, a mount not yet made) is the likely cause: said.
    const unusable = unusableRepoRoots(rules.repoRoots)
      .map((u) => `; JR2_REPO_ROOTS entry \`${u.root}\` ${u.reason}`)
      .join("");
    // A symlink under a root that leads out of it reads as "under a root" unless its target is said.
    const resolved = real === resolve(normalize(path)) ? "" : ` (\`${path}\` resolves to \`${real}\`)`;
    refuse(
      "repo-roots",
      roots.length
        ? `local repositories must be under JR2_REPO_ROOTS (${rules.repoRoots.join(", ")})${resolved}; add a root or move the repository${unusable}`
        : "set JR2_REPO_ROOTS to the directories local repositories may be read from",
    );
  }
  return real;
}

function realOr(path: string): string {
  try {
    return realpathSync(resolve(path));
  } catch {
    return resolve(path);
  }
}

function under(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The URL with any password or token, and every query value, replaced by `***`, for messages and logs. */
export function redactUrl(url: string): string {
  return url
    .replace(/([?&][^=&#]*=)[^&#]*/g, "$1***")
    .replace(
      /^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i,
      (_m, scheme: string, user: string) =>
        `${scheme}${user.includes(":") ? `${user.split(":")[0]}:***` : "***"}@`,
    );
}
