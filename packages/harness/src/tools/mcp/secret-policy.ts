import { secretRefProblem } from "@jr2/wire";

/**
 * Which Harness variables a `{ secret: "NAME" }` header may read (ADR-0234). The Agent's author
 * (the workflow, through the Orchestrator) and the Harness's operator are different people: the
 * Harness's environment holds its bearer, the model keys, the git token and whatever else its
 * host set. So the operator names what MCP servers may read — `JR2_MCP_SECRETS=NAME,NAME` — and
 * every other name is refused; `JR2_*`, git's credential variables, the variable
 * `JR2_GIT_TOKEN_ENV` names and any variable holding the Harness's own bearer or sandbox token
 * are refused even when listed. A secret goes only to `https:` or loopback.
 */

/** The operator's allow-list variable: comma-separated variable names. */
export const MCP_SECRETS_VARIABLE = "JR2_MCP_SECRETS";

/** The names `JR2_MCP_SECRETS` allows (empty when unset). */
export function allowedSecretNames(environment: Readonly<Record<string, string | undefined>>): Set<string> {
  return new Set(
    (environment[MCP_SECRETS_VARIABLE] ?? "")
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n !== ""),
  );
}

/**
 * Why header `header` of the server at `url` may not read variable `name` of `environment`, or
 * `undefined` when it may. The reason names the variable and the fix, never a value.
 */
export function secretHeaderProblem(
  header: string,
  name: string,
  url: string,
  environment: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const shared = secretRefProblem(header, name, url);
  if (shared) return shared;
  const gitTokenVariable = environment.JR2_GIT_TOKEN_ENV?.trim();
  if (gitTokenVariable && name === gitTokenVariable)
    return `header \`${header}\` names \`${name}\`, the git token's variable (JR2_GIT_TOKEN_ENV); give the server its own`;
  const value = environment[name];
  const own = [environment.JR2_HARNESS_TOKEN, environment.JR2_SANDBOX_TOKEN].filter((v) => v);
  if (value && own.some((v) => v === value || value.includes(v as string)))
    return `header \`${header}\` names \`${name}\`, which holds the Harness's own token; give the server its own`;
  if (!allowedSecretNames(environment).has(name))
    return `header \`${header}\` names \`${name}\`, which the Harness's operator has not allowed; add it to ${MCP_SECRETS_VARIABLE} (comma-separated) in the Harness's environment`;
  return undefined;
}
