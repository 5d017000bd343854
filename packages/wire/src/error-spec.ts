/**
 * One row of the error-code table: the HTTP status a route answers with and a message
 * template. `{name}` placeholders are filled from the fields passed to {@link jr2Error}.
 * @see STYLE.md "Errors" — callers branch on `code`, never on message text.
 */
export interface ErrorCodeSpec {
  readonly status: number;
  readonly message: string;
}
