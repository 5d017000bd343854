/**
 * rjsf's validator over @cfworker/json-schema (ADR-0450): it interprets the schema — it
 * compiles no code, so it runs under `script-src 'self'` without `'unsafe-eval'` (ajv, rjsf's
 * default, generates functions with `new Function`). The server's 400 stays the authority.
 */
import { type OutputUnit, Validator } from "@cfworker/json-schema";
import type { RJSFSchema, RJSFValidationError, ValidationData, ValidatorType } from "@rjsf/utils";
import { toErrorSchema } from "@rjsf/utils";

/** Keywords that only say "a nested error happened": the nested error is reported itself. */
const WRAPPERS = new Set([
  "properties",
  "items",
  "prefixItems",
  "allOf",
  "$ref",
  "additionalProperties-wrapper",
]);

const validators = new WeakMap<object, Validator>();

function validatorFor(schema: RJSFSchema): Validator {
  let v = validators.get(schema);
  if (!v) {
    const draft = String(schema.$schema ?? "").includes("draft-07") ? "7" : "2020-12";
    v = new Validator(schema as never, draft, false);
    validators.set(schema, v);
  }
  return v;
}

/** `#/a/0/b` → `.a.0.b` (rjsf's property path). */
const propertyOf = (location: string): string =>
  location
    .replace(/^#/, "")
    .split("/")
    .filter(Boolean)
    .map((p) => `.${decodeURIComponent(p)}`)
    .join("");

/** The leaf errors of one validation, as rjsf's error list. */
export function validationErrors(schema: RJSFSchema, data: unknown): RJSFValidationError[] {
  const result = validatorFor(schema).validate(data ?? {});
  if (result.valid) return [];
  return result.errors
    .filter((e: OutputUnit) => !WRAPPERS.has(e.keyword))
    .map((e: OutputUnit) => {
      const property = propertyOf(e.instanceLocation);
      return {
        name: e.keyword,
        property,
        message: e.error,
        params: {},
        schemaPath: e.keywordLocation,
        stack: `${property || "value"}: ${e.error}`,
      };
    });
}

/** The rjsf validator: validates with @cfworker/json-schema, never evaluates generated code. */
export const cfworkerValidator: ValidatorType = {
  // The console passes no customValidate: the schema is the whole client-side rule.
  validateFormData(formData, schema, _customValidate, transformErrors, uiSchema): ValidationData<unknown> {
    let errors = validationErrors(schema, formData);
    if (transformErrors) errors = transformErrors(errors, uiSchema);
    return { errors, errorSchema: toErrorSchema(errors) };
  },
  isValid(schema, formData, rootSchema) {
    try {
      const withDefs = { ...rootSchema, ...schema } as RJSFSchema;
      return validatorFor(withDefs).validate(formData ?? null).valid;
    } catch {
      return false;
    }
  },
  rawValidation(schema, formData) {
    try {
      return { errors: validationErrors(schema, formData) as never[] };
    } catch (error) {
      return { validationError: error as Error };
    }
  },
};
