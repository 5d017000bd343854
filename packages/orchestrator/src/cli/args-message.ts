/**
 * An error's message; node's argument-parsing errors in jr2's words (node's own ends in an
 * unbalanced quote: `as in '-- "--x"`): the option named, and the command's usage.
 */
export function argsMessage(error: unknown, usage: string): string {
  const text = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const option = /Unknown option '([^']+)'/.exec(text)?.[1] ?? "?";
    return `unknown option \`${option}\`\nusage: ${usage}`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return `${text}\nusage: ${usage}`;
  return text;
}
