import { accessSync, constants } from "node:fs";
import { readFile } from "node:fs/promises";
import { Jr2Error } from "@jr2/wire";

/**
 * Where push (and fetch) credentials come from (issue 28 §5): files or variables the operator
 * names in the Harness's environment. None of them is ever in a Working tool's environment
 * (the Harness's tool environment is built from an allow list) or on a git command line.
 * - `JR2_GIT_TOKEN_FILE` (a file holding an HTTPS token) or `JR2_GIT_TOKEN_ENV` (the name of a
 *   variable holding one); `JR2_GIT_TOKEN_USER` the user sent with it (default `x-access-token`);
 *   `JR2_GIT_TOKEN_HOSTS` the hosts it is sent to — required with a token (`*`: every https
 *   host, said on purpose), so a workflow's URL cannot carry the token to a host nobody named.
 * - `JR2_GIT_SSH_KEY_FILE`: a private key for `ssh://` remotes (`JR2_GIT_SSH_KNOWN_HOSTS`:
 *   the known-hosts file; default strict checking against the system's).
 * - `JR2_GIT_CA_FILE`: a CA bundle for an HTTPS forge with a private certificate.
 */
export interface GitCredentialConfig {
  tokenFile?: string;
  tokenEnv?: string;
  tokenUser: string;
  /** `JR2_GIT_TOKEN_HOSTS`: hosts (`host` or `host:port`, lower case) the token goes to; absent: every https host (`*`, or no token). */
  tokenHosts?: string[];
  sshKeyFile?: string;
  sshKnownHosts?: string;
  caFile?: string;
}

/**
 * Reads the credential names from env (values are read only when a push needs them).
 * @throws Error naming `JR2_GIT_TOKEN_HOSTS` and the fix when a token is configured without it
 * (ADR-0213: the default that sent the token to every https host a Repo Slot named is gone)
 */
export function readGitCredentialConfig(env: NodeJS.ProcessEnv): GitCredentialConfig {
  const pick = (k: string) => (env[k] && env[k]?.trim() !== "" ? env[k]?.trim() : undefined);
  const out: GitCredentialConfig = { tokenUser: pick("JR2_GIT_TOKEN_USER") ?? "x-access-token" };
  const set = <K extends keyof GitCredentialConfig>(k: K, v: GitCredentialConfig[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("tokenFile", pick("JR2_GIT_TOKEN_FILE"));
  set("tokenEnv", pick("JR2_GIT_TOKEN_ENV"));
  const hosts = pick("JR2_GIT_TOKEN_HOSTS")
    ?.split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const source = out.tokenFile ? "JR2_GIT_TOKEN_FILE" : out.tokenEnv ? "JR2_GIT_TOKEN_ENV" : undefined;
  if (source && (hosts === undefined || hosts.length === 0))
    throw new Error(
      `${source} is set but JR2_GIT_TOKEN_HOSTS is not: name the forge host(s) the token may be sent to, ` +
        "e.g. JR2_GIT_TOKEN_HOSTS=git.home or github.com,git.home:3000 (`*` sends it to every https host a Repo Slot names)",
    );
  if (hosts && !hosts.includes("*")) out.tokenHosts = hosts;
  set("sshKeyFile", pick("JR2_GIT_SSH_KEY_FILE"));
  set("sshKnownHosts", pick("JR2_GIT_SSH_KNOWN_HOSTS"));
  set("caFile", pick("JR2_GIT_CA_FILE"));
  return out;
}

/**
 * What is wrong with the named credentials now, one sentence each naming the variable, what it
 * names and the fix: a file this process cannot read, a token variable unset or empty. Said at
 * start as warn lines (the values are read again at each push, so a file mounted later works);
 * `[]` when all is well or nothing is named.
 */
export function credentialProblems(config: GitCredentialConfig, env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const files: [string, string | undefined][] = [
    ["JR2_GIT_TOKEN_FILE", config.tokenFile],
    ["JR2_GIT_SSH_KEY_FILE", config.sshKeyFile],
    ["JR2_GIT_SSH_KNOWN_HOSTS", config.sshKnownHosts],
    ["JR2_GIT_CA_FILE", config.caFile],
  ];
  for (const [name, file] of files) {
    if (file === undefined) continue;
    try {
      accessSync(file, constants.R_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      problems.push(
        `${name}=${file} cannot be read by the Harness (${code}): every push or fetch that needs it fails until it can; fix the path or its owner and mode`,
      );
    }
  }
  if (config.tokenEnv && !env[config.tokenEnv]?.trim())
    problems.push(
      `JR2_GIT_TOKEN_ENV names \`${config.tokenEnv}\`, which is unset or empty: every push or fetch that needs the token fails until it is set`,
    );
  return problems;
}

/**
 * The environment that gives one git call the credentials for `url`: an HTTPS token as an
 * `Authorization: Basic` header through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n` (never argv, so
 * never in `ps`), an SSH key through `GIT_SSH_COMMAND` with BatchMode. Local URLs get none.
 * @throws Jr2Error `JR2_ERR_WORKSPACE_CREDENTIAL_UNREADABLE` naming the file or variable
 */
export async function credentialEnv(
  config: GitCredentialConfig,
  url: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Record<string, string>> {
  const pairs: [string, string][] = [];
  const out: Record<string, string> = {};
  if (/^https:\/\//i.test(url)) {
    if (config.caFile) pairs.push(["http.sslCAInfo", config.caFile]);
    const origin = tokenOrigin(config, url);
    const token = origin === undefined ? undefined : await readToken(config, env);
    if (token) {
      const basic = Buffer.from(`${config.tokenUser}:${token}`).toString("base64");
      // Keyed to the URL's origin (adversary L5): git sends it only to that scheme, host and port.
      pairs.push([`http.${origin}/.extraHeader`, `Authorization: Basic ${basic}`]);
    }
  } else if (/^ssh:\/\//i.test(url) || /^[^/:]+@[^/:]+:/.test(url)) {
    const ssh = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"];
    if (config.sshKnownHosts) ssh.push("-o", `UserKnownHostsFile=${quote(config.sshKnownHosts)}`);
    if (config.sshKeyFile) ssh.push("-o", "IdentitiesOnly=yes", "-i", quote(config.sshKeyFile));
    out.GIT_SSH_COMMAND = ssh.join(" ");
  }
  if (pairs.length) {
    out.GIT_CONFIG_COUNT = String(pairs.length);
    pairs.forEach(([k, v], i) => {
      out[`GIT_CONFIG_KEY_${i}`] = k;
      out[`GIT_CONFIG_VALUE_${i}`] = v;
    });
  }
  return out;
}

/**
 * The `https://host[:port]` the token may be sent to for `url`, or undefined when
 * `JR2_GIT_TOKEN_HOSTS` is set and does not list the URL's host.
 */
function tokenOrigin(config: GitCredentialConfig, url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const host = parsed.host.toLowerCase();
  if (
    config.tokenHosts &&
    !config.tokenHosts.includes(host) &&
    !config.tokenHosts.includes(parsed.hostname.toLowerCase())
  )
    return undefined;
  return `https://${host}`;
}

async function readToken(config: GitCredentialConfig, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (config.tokenFile) {
    try {
      return (await readFile(config.tokenFile, "utf8")).trim();
    } catch (error) {
      throw new Jr2Error("JR2_ERR_WORKSPACE_CREDENTIAL_UNREADABLE", {
        source: `JR2_GIT_TOKEN_FILE=${config.tokenFile}`,
        detail: (error as NodeJS.ErrnoException).code ?? String(error),
      });
    }
  }
  if (config.tokenEnv) {
    const v = env[config.tokenEnv];
    if (!v)
      throw new Jr2Error("JR2_ERR_WORKSPACE_CREDENTIAL_UNREADABLE", {
        source: `JR2_GIT_TOKEN_ENV=${config.tokenEnv}`,
        detail: "the variable is unset or empty",
      });
    return v.trim();
  }
  return undefined;
}

function quote(path: string): string {
  return `'${path.replace(/'/g, "'\\''")}'`;
}
