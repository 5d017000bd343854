/**
 * A small deterministic JSON-Schema example generator: the arguments a simulated model sends
 * for a tool. It covers what tool parameters use — `object` (`properties`, `required`),
 * `string` (`minLength`, `maxLength`, `format`), `number`/`integer` (`minimum`, `maximum`,
 * exclusive bounds, `multipleOf`), `boolean`, `null`, `array` (`items`, `minItems`,
 * `maxItems`), `enum`, `const`, `default`, `anyOf`/`oneOf` (first branch), `allOf` (merged),
 * local `$ref` (`#/$defs/…`, `#/definitions/…`). Only required properties are filled.
 * `pattern` is not honoured.
 *
 * @see SPEC §9 ("arguments valid for its schema")
 */
type Schema = Record<string, unknown>;

const FORMATS: Record<string, string> = {
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
  time: "00:00:00Z",
  email: "sim@example.com",
  uri: "https://example.com/",
  url: "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
};

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function resolveRef(ref: string, root: Schema): Schema {
  const path = ref.replace(/^#\/?/, "").split("/").filter(Boolean);
  let node: unknown = root;
  for (const key of path)
    node = isSchema(node) ? node[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
  return isSchema(node) ? node : {};
}

function exampleString(schema: Schema, hint: string): string {
  const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
  let text = format ?? `example ${hint}`.trim();
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Number.POSITIVE_INFINITY;
  while (text.length < min) text += "x";
  return text.slice(0, max);
}

function exampleNumber(schema: Schema, integer: boolean): number {
  const num = (key: string) => (typeof schema[key] === "number" ? (schema[key] as number) : undefined);
  const lo = num("minimum") ?? num("exclusiveMinimum");
  const loOpen = num("minimum") === undefined && lo !== undefined;
  const hi = num("maximum") ?? num("exclusiveMaximum");
  const hiOpen = num("maximum") === undefined && hi !== undefined;
  let value: number;
  if (integer) {
    const least = lo === undefined ? undefined : loOpen ? Math.floor(lo) + 1 : Math.ceil(lo);
    const most = hi === undefined ? undefined : hiOpen ? Math.ceil(hi) - 1 : Math.floor(hi);
    value = least ?? Math.min(1, most ?? 1);
  } else if (lo !== undefined && hi !== undefined) {
    value = (lo + hi) / 2;
  } else if (lo !== undefined) {
    value = loOpen ? lo + 1 : lo;
  } else {
    value = hi === undefined ? 1 : Math.min(1, hiOpen ? hi - 1 : hi);
  }
  const step = num("multipleOf");
  return step ? Math.ceil(value / step) * step : value;
}

function firstType(schema: Schema): string | undefined {
  if (typeof schema.type === "string") return schema.type;
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null") ?? schema.type[0];
  if (isSchema(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function example(schema: Schema, root: Schema, hint: string, depth: number): unknown {
  if (depth > 32) return null;
  if (typeof schema.$ref === "string") return example(resolveRef(schema.$ref, root), root, hint, depth + 1);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ("default" in schema) return schema.default;
  const branches = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(branches) && isSchema(branches[0])) return example(branches[0], root, hint, depth + 1);
  if (Array.isArray(schema.allOf)) {
    const merged: Schema = { ...schema, allOf: undefined };
    for (const part of schema.allOf) {
      if (!isSchema(part)) continue;
      Object.assign(merged, part, {
        properties: { ...(merged.properties as Schema), ...(part.properties as Schema) },
        required: [...((merged.required as string[]) ?? []), ...((part.required as string[]) ?? [])],
      });
    }
    delete merged.allOf;
    return example(merged, root, hint, depth + 1);
  }
  switch (firstType(schema)) {
    case "object": {
      const properties = isSchema(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      const out: Record<string, unknown> = {};
      for (const key of required) {
        const property = properties[key];
        out[key] = example(isSchema(property) ? property : {}, root, key, depth + 1);
      }
      return out;
    }
    case "array": {
      const items = isSchema(schema.items) ? schema.items : {};
      const min = typeof schema.minItems === "number" ? schema.minItems : 1;
      const max = typeof schema.maxItems === "number" ? schema.maxItems : Number.POSITIVE_INFINITY;
      const count = Math.min(Math.max(min, 1), max);
      return Array.from({ length: count }, (_, i) => example(items, root, `${hint} ${i + 1}`, depth + 1));
    }
    case "string":
      return exampleString(schema, hint);
    case "integer":
      return exampleNumber(schema, true);
    case "number":
      return exampleNumber(schema, false);
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return {};
  }
}

/**
 * An example value satisfying `schema`; the same schema always yields the same value.
 *
 * @param schema - a JSON Schema (a tool's `parameters`); absent or not an object → `{}`.
 * @returns a JSON value; for a tool's parameters, an object.
 * @example exampleFromSchema({ type: "object", required: ["comments"],
 *   properties: { comments: { type: "array", items: { type: "string" }, minItems: 1 } } })
 *   // → { comments: ["example comments 1"] }
 */
export function exampleFromSchema(schema: unknown): unknown {
  if (!isSchema(schema)) return {};
  return example(schema, schema, "", 0);
}
