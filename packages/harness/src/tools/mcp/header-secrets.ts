import { readFileSync } from "node:fs";
import { isStdioServer, type McpServers } from "@jr2/wire";
import { secretHeaderProblem } from "./secret-policy.js";

/**
 * The values of every `{ secret: "NAME" }` header of `servers`, read from the Harness's
 * environment (unset names are left out: their server fails to start, naming the variable; so
 * are names the secret policy refuses: their value is never read into the redactor's use).
 */
export function headerSecretValues(
  servers: McpServers,
  environment: Readonly<Record<string, string | undefined>>,
): string[] {
  const out: string[] = [];
  for (const server of Object.values(servers)) {
    if (isStdioServer(server)) continue;
    for (const [header, v] of Object.entries(server.headers ?? {})) {
      if (typeof v === "string") continue;
      if (secretHeaderProblem(header, v.secret, server.url, environment)) continue;
      const value = environment[v.secret];
      if (value) out.push(value);
    }
  }
  return out;
}

/**
 * The git token's value (`JR2_GIT_TOKEN_FILE`'s content, `JR2_GIT_TOKEN_ENV`'s variable), for the
 * MCP redactor (ADR-0235): a server's stderr and answers reach warn lines and the model, and a
 * server that read the token somehow must not get it printed. Unreadable → nothing.
 */
export function gitTokenValues(environment: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  const file = environment.JR2_GIT_TOKEN_FILE?.trim();
  if (file)
    try {
      out.push(readFileSync(file, "utf8").trim());
    } catch {
      // Unreadable: the push says so when it needs the token; nothing to redact here.
    }
  const variable = environment.JR2_GIT_TOKEN_ENV?.trim();
  const value = variable ? environment[variable]?.trim() : undefined;
  if (value) out.push(value);
  return out.filter((v) => v !== "");
}
