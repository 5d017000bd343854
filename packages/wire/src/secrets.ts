/**
 * The secrets both services are started with, and the rules they share (issue 10 §5): a token
 * must be long and not a placeholder; a sandbox token must have the shape the Orchestrator mints.
 * Pure checks: each returns what is wrong (a sentence naming the variable and the fix) or
 * `undefined`; the caller decides how to refuse.
 * @see SPEC §4.4, §11
 */

/** Shortest secret a service accepts for `JR2_INSTANCE_TOKEN`, `JR2_HARNESS_TOKEN`, `JR2_SANDBOX_KEY`. */
export const MIN_SECRET_LENGTH = 16;

/** How to make a good secret, named in every refusal. */
export const SECRET_HINT = "generate one with `openssl rand -hex 32`";

/**
 * Values that ship in templates, docs and habits, lower-cased. A value containing `change-me`
 * or `changeme` anywhere is refused too (`CHANGE-ME-TO-SOMETHING-LONG`).
 */
export const PLACEHOLDER_SECRETS: ReadonlySet<string> = new Set([
  "changeme",
  "change-me",
  "secret",
  "token",
  "dev",
  "jr2",
  "password",
  "admin",
  "test",
  "your-token-here",
  "your-secret-here",
  "replace-with-a-secret",
  "replace-with-a-token",
  "<token>",
  "<secret>",
]);

/** Fewest distinct characters a secret has (issue 24 item 8); random hex of 16+ has ~10 or more. */
export const MIN_DISTINCT_CHARACTERS = 6;

/**
 * Words placeholder phrases and guessable secrets are made of, lower-cased (issue 24 item 8:
 * `passwordpassword`, `your-token-here-please`). A secret whose every run of letters and digits
 * is made only of these words is refused.
 */
export const PLACEHOLDER_WORDS: ReadonlySet<string> = new Set([
  ...["password", "passwd", "pass", "passphrase", "secret", "token", "key", "api", "access", "auth"],
  ...["your", "my", "our", "the", "a", "an", "here", "please", "change", "me", "it", "replace", "with"],
  ...["this", "put", "insert", "enter", "set", "new", "example", "sample", "default", "value"],
  ...["admin", "root", "user", "test", "testing", "dev", "jr2", "instance", "harness", "sandbox"],
  ...["letmein", "qwerty", "welcome", "hello", "world", "foo", "bar", "baz", "todo", "fixme"],
]);

/** True when `segment` (lower-case) is a concatenation of {@link PLACEHOLDER_WORDS}. */
function wordsOnly(segment: string): boolean {
  const ok: boolean[] = [true];
  for (let end = 1; end <= segment.length; end++)
    ok[end] = [...PLACEHOLDER_WORDS].some(
      (w) => w.length <= end && ok[end - w.length] === true && segment.endsWith(w, end),
    );
  return ok[segment.length] === true;
}

/** True when `lower` is placeholder words only (separators aside), e.g. `your-token-here-please`. */
function placeholderPhrase(lower: string): boolean {
  const segments = lower.split(/[^a-z0-9]+/).filter(Boolean);
  return segments.length > 0 && segments.every(wordsOnly);
}

/**
 * What is wrong with the secret `value` of env variable `variable`, or `undefined` when it is
 * acceptable: empty, a placeholder, one character repeated, shorter than
 * {@link MIN_SECRET_LENGTH} characters, placeholder words only ({@link PLACEHOLDER_WORDS}), or
 * fewer than {@link MIN_DISTINCT_CHARACTERS} distinct characters are refused.
 * @example secretProblem("JR2_HARNESS_TOKEN", "CHANGE-ME") // "JR2_HARNESS_TOKEN is the placeholder …"
 */
export function secretProblem(variable: string, value: string | undefined): string | undefined {
  const v = value ?? "";
  const lower = v.toLowerCase();
  if (v.trim() === "") return `${variable} is empty; ${SECRET_HINT}`;
  if (PLACEHOLDER_SECRETS.has(lower) || lower.includes("change-me") || lower.includes("changeme"))
    return `${variable} is the placeholder \`${v}\`; ${SECRET_HINT}`;
  if (v.length < MIN_SECRET_LENGTH)
    return `${variable} is ${v.length} characters, shorter than ${MIN_SECRET_LENGTH}; ${SECRET_HINT}`;
  if (new Set(v).size === 1) return `${variable} is one character repeated; ${SECRET_HINT}`;
  if (placeholderPhrase(lower))
    return `${variable} is made of dictionary words or a placeholder phrase only, easy to guess; ${SECRET_HINT}`;
  if (new Set(v).size < MIN_DISTINCT_CHARACTERS)
    return `${variable} has ${new Set(v).size} distinct characters, fewer than ${MIN_DISTINCT_CHARACTERS}; ${SECRET_HINT}`;
  return undefined;
}

/**
 * What keeps `name` from being a sandbox name, or `undefined`. A sandbox token travels in an
 * HTTP header, which carries Latin-1 bytes only, and the Orchestrator reads the token as one
 * word: so a name is 1–256 characters of visible Latin-1 (U+0021–U+007E, U+00A1–U+00FF) —
 * no space, control character or character above U+00FF. A name that broke this rule could be
 * minted but never presented (issue 16 §7).
 */
export function sandboxNameProblem(name: string): string | undefined {
  if (name.length === 0) return "it is empty";
  if (name.length > 256) return `it is ${name.length} characters; at most 256`;
  for (const ch of name) {
    const c = ch.codePointAt(0) ?? 0;
    const visible = (c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xff);
    if (!visible) {
      const hex = c.toString(16).toUpperCase().padStart(4, "0");
      return `it holds U+${hex}; a sandbox token travels in an HTTP header, so a name is visible Latin-1 only (no spaces, controls or characters above U+00FF)`;
    }
  }
  return undefined;
}

/** A sandbox token: `<sandbox>.<64 lower-case hex>` (hex of HMAC-SHA256(JR2_SANDBOX_KEY, sandbox)). */
const SANDBOX_TOKEN = /^(.+)\.([0-9a-f]{64})$/s;

/**
 * What is wrong with the shape of sandbox token `token` (env `variable`), or `undefined`. Only
 * the shape: the MAC can be checked only by the Orchestrator, which holds the key.
 * @example sandboxTokenProblem("JR2_SANDBOX_TOKEN", "CHANGE-ME") // "JR2_SANDBOX_TOKEN is not …"
 */
export function sandboxTokenProblem(variable: string, token: string): string | undefined {
  const how =
    "mint it from JR2_SANDBOX_KEY: `<sandbox>.<hex hmac-sha256(JR2_SANDBOX_KEY, sandbox)>` (docker/README.md shows a one-line command)";
  const m = SANDBOX_TOKEN.exec(token);
  if (!m) return `${variable} is not a sandbox token \`<sandbox>.<64 hex>\`; ${how}`;
  const problem = sandboxNameProblem(m[1] ?? "");
  return problem ? `${variable}'s sandbox name is not valid: ${problem}` : undefined;
}
