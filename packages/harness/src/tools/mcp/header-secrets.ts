import { isStdioServer, type McpServers } from "@jr2/wire";

/**
 * The values of every `{ secret: "NAME" }` header of `servers`, read from the Harness's
 * environment (unset names are left out: their server fails to start, naming the variable).
 */
export function headerSecretValues(
  servers: McpServers,
  environment: Readonly<Record<string, string | undefined>>,
): string[] {
  const out: string[] = [];
  for (const server of Object.values(servers)) {
    if (isStdioServer(server)) continue;
    for (const v of Object.values(server.headers ?? {})) {
      if (typeof v === "string") continue;
      const value = environment[v.secret];
      if (value) out.push(value);
    }
  }
  return out;
}
