/**
 * Stands in for `@rjsf/validator-ajv8`, which @rjsf/core's test helper (`getTestRegistry`)
 * imports: ajv compiles validators with `new Function`, refused by the console's CSP
 * (ADR-0450). The console validates with {@link ../validator.ts}; nothing calls this.
 */
const refused = (): never => {
  throw new Error("ajv is not part of the jr2 console (CSP: no 'unsafe-eval'); use cfworkerValidator");
};
export default refused;
export const customizeValidator = refused;
