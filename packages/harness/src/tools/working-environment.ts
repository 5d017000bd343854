import type { ModelTable } from "../provider/models.js";
import { gitTokenValues } from "./mcp/header-secrets.js";
import type { Redactor } from "./secret-redaction.js";

/**
 * What a Working tool's process may see of the Harness's environment (issue 11 "Secrets",
 * ADR-0158): the Harness's own variables and anything named or holding a secret are left out;
 * the rest (PATH, HOME, LANG, TERM, a toolchain's variables) is kept so bash still works.
 * Pure: the caller passes the environment and the Harness's secrets.
 */

/** Every `JR2_*` variable is the Harness's configuration, never a tool's. */
const HARNESS_VARIABLE = /^JR2_/i;

/**
 * Names that say "secret": `*_API_KEY`, `*_TOKEN`, `*_SECRET`, passwords, credentials, private
 * and access keys, at the end of the name or before an `_` (`GITHUB_TOKEN`, `OPENAI_API_KEY`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, npm's `…_authToken`); and OTLP exporter headers,
 * which carry a collector's `Authorization`. `TOKENIZERS_PARALLELISM` is not one.
 *
 * Also (the sandbox's adversary, issue 26): any `*_KEY` (`OPENAI_KEY`, `SIGNING_KEY`), a personal
 * access token `PAT`, `AUTH` as a word (`NPM_AUTH`, `SSH_AUTH_SOCK`, `DOCKER_AUTH_CONFIG`),
 * `…PASS` (`PGPASS`), `…_PWD` (`MYSQL_PWD`; never `PWD`/`OLDPWD`, the working directory),
 * a `DSN`, a `COOKIE`, `KUBECONFIG`.
 */
const SECRET_NAME =
  /(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_?KEY|ACCESS_?KEY)(_|$)|^OTEL_EXPORTER_OTLP_(\w+_)?HEADERS$|_KEY$|(^|_)(PAT|AUTH|DSN|COOKIE|KUBECONFIG)(_|$)|PASS(_|$)|.+_PWD$/i;

/** A URL carrying a password (`postgres://user:pw@host/db`): its variable is left out whatever its name. */
const URL_WITH_PASSWORD = /:\/\/[^/@\s:]*:[^/@\s]+@/;

/** True when a variable's name marks it as a secret (see {@link SECRET_NAME}'s list). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** What the Harness knows to be secret. */
export interface HarnessSecretSources {
  /** `JR2_HARNESS_TOKEN`, the bearer the Orchestrator presents. */
  harnessToken: string;
  /** `JR2_SANDBOX_TOKEN` (`<sandbox>.<64 hex>`), or `""`. */
  sandboxToken: string;
  /** The model table: every entry's `apiKey`. */
  models: ModelTable;
  /** The environment the Harness was started with: its secret-named variables' values. */
  environment: NodeJS.ProcessEnv;
}

/**
 * The Harness's secret values, for a {@link Redactor}: its bearer, its sandbox token and that
 * token's MAC alone, every model entry's `apiKey`, the git token (`JR2_GIT_TOKEN_FILE`'s content,
 * the variable `JR2_GIT_TOKEN_ENV` names), and the value of every variable of its
 * environment whose name is a secret's (a `GITHUB_TOKEN` the Harness inherited is readable in
 * `/proc/<harness pid>/environ` even when the tool's own environment lacks it).
 * Values too short to redact are filtered by the redactor, not here.
 * @see ADR-0158
 */
export function harnessSecretValues(sources: HarnessSecretSources): string[] {
  const values = [sources.harnessToken, sources.sandboxToken];
  const mac = sources.sandboxToken.split(".").pop();
  if (mac !== undefined && mac !== sources.sandboxToken) values.push(mac);
  for (const entry of Object.values(sources.models)) if (entry.apiKey) values.push(entry.apiKey);
  for (const [name, value] of Object.entries(sources.environment)) {
    if (value && isSecretName(name)) values.push(value);
  }
  // The git token whatever its variable is called (`JR2_GIT_TOKEN_ENV=GH_PUSH`: not a secret's
  // name), so a tool's environment drops that variable (it holds a secret) and output redacts it.
  values.push(...gitTokenValues(sources.environment));
  return values;
}

/**
 * The environment a Working tool starts with: `env` without every `JR2_*` variable, every
 * variable whose name is a secret's ({@link isSecretName}) and every variable whose value holds
 * one of the Harness's secrets (`MY_CFG=…sk-…`); everything else as it was.
 * @example scrubEnvironment({ PATH: "/bin", JR2_HARNESS_TOKEN: "…" }, redactor) // { PATH: "/bin" }
 * @see ADR-0158
 */
export function scrubEnvironment(
  env: NodeJS.ProcessEnv,
  secrets: Pick<Redactor, "holds">,
): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (HARNESS_VARIABLE.test(name) || isSecretName(name) || secrets.holds(value)) continue;
    if (URL_WITH_PASSWORD.test(value)) continue;
    kept[name] = value;
  }
  return kept;
}
