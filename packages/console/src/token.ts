/**
 * The instance token (ADR-0451): entered once, kept in `sessionStorage` (gone with the tab),
 * sent only as `Authorization: Bearer` — never in a URL, never in `localStorage`.
 */
const KEY = "jr2.instanceToken";

/** The stored token, or null. */
export function readToken(): string | null {
  return sessionStorage.getItem(KEY);
}

/** Stores the token for this tab's session. */
export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

/** Forgets the token (sign out, or the server said it is wrong). */
export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
