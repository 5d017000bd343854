import { z } from "zod";

/**
 * An Agent's MCP servers as they ride the admission's definition (issue 29, ADR-0230): a stdio
 * server is a command the Harness starts in the run's sandbox; an HTTP server is a Streamable
 * HTTP URL. Header values are plain text or `{ secret: "NAME" }` — a NAME the Harness resolves
 * from its own environment, never a value: a secret never travels in a definition.
 * Shared by the Orchestrator (validation at load) and the Harness (the client).
 */

/** A server's key: letters, digits and `-` (no `_`, so `mcp__<server>__` parses one way), ≤ 32. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/;

/** Every MCP tool name the model reads starts so (`mcp__<server>__<tool>`); Menu picks may not. */
export const MCP_TOOL_PREFIX = "mcp__";

/** An environment variable's name, as a secret reference names it. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** `{ secret: "NAME" }`: the Harness reads `NAME` from its environment when it connects. */
export const McpSecretRef = z.object({ secret: z.string().regex(SECRET_NAME_PATTERN) }).strict();
export type McpSecretRef = z.infer<typeof McpSecretRef>;

/** A header value: plain text that is no secret, or a secret by name. */
export const McpHeaderValue = z.union([z.string().max(4096), McpSecretRef]);
export type McpHeaderValue = z.infer<typeof McpHeaderValue>;

/**
 * A stdio server: `command` is installed in the image or on the host (install-at-start forms
 * such as `npx -y` are refused by the Harness: the sandbox has no network). `required: true`
 * faults the Turn (`mcp-unavailable`) when the server is down at conversation start.
 */
export const McpStdioServer = z
  .object({
    command: z.string().min(1).max(4096),
    args: z.array(z.string().max(4096)).max(256).optional(),
    required: z.boolean().optional(),
  })
  .strict();
export type McpStdioServer = z.infer<typeof McpStdioServer>;

/** A Streamable HTTP server; its `headers` name secrets, resolved in the Harness. */
export const McpHttpServer = z
  .object({
    url: z.string().url().max(4096),
    headers: z.record(z.string().min(1).max(256), McpHeaderValue).optional(),
    required: z.boolean().optional(),
  })
  .strict();
export type McpHttpServer = z.infer<typeof McpHttpServer>;

/** One server of an Agent. */
export const McpServer = z.union([McpStdioServer, McpHttpServer]);
export type McpServer = z.infer<typeof McpServer>;

/** An Agent's servers by key (at most 16). */
export const McpServers = z
  .record(z.string().regex(MCP_SERVER_NAME_PATTERN), McpServer)
  .refine((r) => Object.keys(r).length <= 16, { message: "at most 16 MCP servers per Agent" });
export type McpServers = z.infer<typeof McpServers>;

/** True for a stdio server (it has a `command`). */
export function isStdioServer(server: McpServer): server is McpStdioServer {
  return "command" in server;
}

/** Header names whose value is a credential whatever it looks like. */
const SECRET_HEADERS =
  /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$|token|secret|key|auth|pass/i;

/**
 * What makes literal header `value` of `header` look like a secret, or `undefined` (issue 29:
 * refused at load — name it `{ secret: "NAME" }` instead). A credential-named header
 * (`Authorization`, `Cookie`, `*token*`, `*key*`, …) is refused whatever its value; any header
 * is refused when its value is `Bearer …`/`Basic …`/`token …`, has a well-known key prefix
 * (`sk-`, `ghp_`, `github_pat_`, `xox`, `AKIA`), or is a 20+ character run mixing letters and
 * digits (random keys look so; `application/json` and `2025-06-18` do not).
 */
export function literalSecretProblem(header: string, value: string): string | undefined {
  if (SECRET_HEADERS.test(header)) return `header \`${header}\` carries a credential`;
  if (/^(bearer|basic|token)\s+\S/i.test(value)) return `its value starts with a credential scheme`;
  if (/^(sk-|ghp_|gho_|github_pat_|xox[abpr]-|AKIA|glpat-)/.test(value))
    return `its value has a well-known key prefix`;
  for (const run of value.match(/[A-Za-z0-9_\-+/=]{20,}/g) ?? [])
    if (/[0-9]/.test(run) && /[A-Za-z]/.test(run))
      return `its value holds a key-like run of ${run.length} characters`;
  return undefined;
}

/**
 * Variables a `{ secret }` header may never name, whatever the operator allows (ADR-0234): the
 * Harness's own configuration and credentials (`JR2_*`: its bearer, its sandbox token, the model
 * table, the git token's file or variable) and git's credential plumbing (`GIT_ASKPASS`,
 * `GIT_CONFIG_*`, `GIT_SSH_COMMAND`, …).
 */
const REFUSED_SECRET_NAMES = /^JR2_|^GIT_(ASKPASS|CONFIG_|SSH|TOKEN|PASSWORD|CREDENTIAL)/i;

/** True when `url` is `https:`, or `http:` to a loopback host (127.0.0.0/8, ::1, localhost). */
export function isSecretSafeUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol === "https:") return true;
  if (u.protocol !== "http:") return false;
  const host = u.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Why header `header` of a server at `url` may not carry `{ secret: name }`, or `undefined`
 * (ADR-0234; checked at load by the Orchestrator and again by the Harness): the name is one of
 * the Harness's own or git's credential variables, or the URL would send the secret in clear
 * text (plain `http:` to a host other than loopback).
 */
export function secretRefProblem(header: string, name: string, url: string): string | undefined {
  if (REFUSED_SECRET_NAMES.test(name))
    return `header \`${header}\` names \`${name}\`, one of the Harness's own or git's credential variables; name a variable meant for this server`;
  if (!isSecretSafeUrl(url))
    return `header \`${header}\` carries a secret to \`${url}\`, which is neither https nor loopback; use https`;
  return undefined;
}
