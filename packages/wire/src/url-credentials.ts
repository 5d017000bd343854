/**
 * Credentials written into URLs (issue 28 §5, ADR-0213, ADR-0297): one rule for both services.
 * The Harness refuses a Repo Slot URL holding one (`credentials-in-url`); the Orchestrator
 * refuses run input and fork context holding one, before anything is stored — run input is kept
 * in the store, its versions and its log, and shown by `jr2 show` and the console, so a token
 * there is a token at rest and on screen. A credential is named, never quoted. Pure.
 */

/** Query parameter names that carry a credential (adversary L3): refused, never stored or logged. */
export const CREDENTIAL_PARAM =
  /^(access[_-]?token|token|private[_-]?token|oauth[_-]?token|auth|authorization|password|passwd|pwd|secret|client[_-]?secret|api[_-]?key|apikey|key|sig|signature|x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential)$/i;

/** The fix every refusal names: the Harness's own credential files, never the URL. */
export const URL_CREDENTIAL_FIX =
  "name a credential file for the Harness instead (JR2_GIT_TOKEN_FILE with JR2_GIT_TOKEN_HOSTS)";

/**
 * What credential `url` holds, in words (`the \`access_token=\` query parameter`, `a password`,
 * `a user name`), or undefined. Only URLs with a `scheme://` authority are read; `userIsSecret`
 * (https Repo Slots: git would prompt for the password) counts a bare user name too.
 */
export function credentialInUrl(url: string, { userIsSecret = false } = {}): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const param = [...parsed.searchParams.keys()].find((k) => CREDENTIAL_PARAM.test(k));
  if (param !== undefined) return `the \`${param}=\` query parameter`;
  if (parsed.password) return "a password or token";
  if (userIsSecret && parsed.username) return "a user name";
  return undefined;
}

/** Where in a JSON value a string holds a credential URL: its path and what it holds. */
export interface CredentialAt {
  path: (string | number)[];
  what: string;
}

/**
 * The first string in `value` (walked depth-first, at most `limit` strings) that is a URL
 * holding a credential ({@link credentialInUrl}, a bare user name allowed), or undefined.
 */
export function credentialInJson(value: unknown, limit = 10_000): CredentialAt | undefined {
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  let seen = 0;
  while (stack.length > 0 && seen < limit) {
    const { v, path } = stack.pop()!;
    if (typeof v === "string") {
      seen++;
      const what = credentialInUrl(v);
      if (what) return { path, what };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i] });
    } else if (v !== null && typeof v === "object") {
      for (const [k, child] of Object.entries(v).reverse()) stack.push({ v: child, path: [...path, k] });
    }
  }
  return undefined;
}
