import { ErrorBody } from "@jr2/wire";

/**
 * The response schemas of a route's error statuses: every one is {@link ErrorBody}
 * (`{ error, code, ...fields }`), so OpenAPI documents them and the serializer keeps the fields.
 * @example schema: { response: { 200: Surface, ...errorResponses(401, 404, 503) } }
 */
export function errorResponses<S extends number>(...statuses: S[]): Record<S, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBody])) as Record<S, typeof ErrorBody>;
}
