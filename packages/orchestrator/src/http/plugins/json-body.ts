import { Jr2Error } from "@jr2/wire";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

/**
 * The one body parser: `application/json` (with any parameters). Every other content type has
 * no parser, so Fastify refuses it with 415 (`JR2_ERR_REQUEST_UNSUPPORTED_MEDIA_TYPE`) before a
 * route sees it — a `text/plain` body on a JSON route is the wrong media type, not a bad body.
 *
 * Keys that could pollute a prototype (`__proto__` anywhere, `constructor` holding a
 * `prototype`) are refused with 400 `JR2_ERR_REQUEST_INVALID` naming the key and where it sits,
 * not "not valid JSON": the body is valid JSON, the key is what is refused. Fastify's own parser
 * (secure-json-parse) says only "invalid JSON" and loses which key it was.
 * @see SPEC §4, ADR-0053
 */
export const jsonBodyPlugin = fp(
  async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
      try {
        done(null, parseJsonBody(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
  },
  { name: "jr2-json-body", fastify: "5.x" },
);

/**
 * Parses a JSON request body, refusing prototype-polluting keys.
 * @throws Jr2Error `JR2_ERR_REQUEST_MALFORMED_JSON` (empty or unparseable),
 *   `JR2_ERR_REQUEST_INVALID` naming a refused key and its path (e.g. `input.__proto__`)
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0)
    throw new Jr2Error("JR2_ERR_REQUEST_MALFORMED_JSON", { detail: "the body is empty" });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Jr2Error("JR2_ERR_REQUEST_MALFORMED_JSON", { detail: (error as Error).message }, error);
  }
  // JSON.parse makes `__proto__` an own data key (no pollution yet); refused before any code
  // copies it somewhere it would be. Scanned only when the text could hold one.
  if (text.includes("__proto__") || text.includes("constructor")) {
    const refused = findRefusedKey(value);
    if (refused) {
      throw new Jr2Error("JR2_ERR_REQUEST_INVALID", {
        detail: `key \`${refused.key}\` is not accepted (at \`${refused.path}\`)`,
        key: refused.key,
        path: refused.path,
      });
    }
  }
  return value;
}

/** The first refused key, depth-first; iterative, so a deeply nested body cannot overflow the stack. */
function findRefusedKey(root: unknown): { key: string; path: string } | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: "" }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { value, path } = next;
    if (value === null || typeof value !== "object") continue;
    const at = (key: string) => (path ? `${path}.${key}` : key);
    if (Object.hasOwn(value, "__proto__")) return { key: "__proto__", path: at("__proto__") };
    const ctor = (value as { constructor?: unknown }).constructor;
    if (
      Object.hasOwn(value, "constructor") &&
      typeof ctor === "object" &&
      ctor !== null &&
      Object.hasOwn(ctor, "prototype")
    ) {
      return { key: "constructor.prototype", path: at("constructor.prototype") };
    }
    const entries = Object.entries(value).reverse();
    for (const [key, child] of entries) {
      stack.push({ value: child, path: Array.isArray(value) ? `${path}[${key}]` : at(key) });
    }
  }
  return undefined;
}
