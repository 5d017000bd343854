/** The instance token as entered, checked before it is stored or sent (ADR-0451). */

/**
 * Why `token` (already trimmed) cannot be sent, or null. A header carries Latin-1 only — `fetch`
 * refuses any other character with an error that reads like a network failure — and the
 * Orchestrator reads the bearer as one word, so an inner space can never match.
 */
export function tokenProblem(token: string): string | null {
  if (token === "") return "Enter the instance token (JR2_INSTANCE_TOKEN).";
  if (!/^[\x21-\x7e\xa1-\xff]+$/.test(token))
    return "That token cannot be sent: it holds a space or a character an HTTP header cannot carry (above U+00FF, or a control character). Paste JR2_INSTANCE_TOKEN exactly.";
  return null;
}
