/**
 * A small JSON scanner that finds byte spans in raw request bodies without re-serializing
 * them: §10 compares the bytes a model server received, and a parse/stringify round trip
 * would hide exactly the differences (key order, escapes, whitespace) that break a prefix cache.
 * Offsets are UTF-16 code-unit indices into the raw string; every span boundary sits on an
 * ASCII delimiter, so a prefix in code units is a prefix in UTF-8 bytes too.
 * @see SPEC §10 ("request n is a byte prefix of request n+1")
 */

/** A half-open range `[start, end)` of the raw text. */
export interface Span {
  start: number;
  end: number;
}

/** One member of a JSON object: its decoded key and the spans of key and value. */
export interface Member {
  key: string;
  keySpan: Span;
  valueSpan: Span;
}

/** Raw text that is not the JSON the scanner expected; `at` is where it stopped. */
export class JsonScanError extends Error {
  readonly code = "JR2_ERR_CONFORMANCE_NOT_JSON";
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(`${message} at offset ${at}`);
  }
}

function skipWhitespace(raw: string, i: number): number {
  let j = i;
  while (j < raw.length) {
    const c = raw.charCodeAt(j);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    j++;
  }
  return j;
}

/** Index just after the string that opens at `i` (a `"`); honours `\` escapes. */
function skipString(raw: string, i: number): number {
  let j = i + 1;
  while (j < raw.length) {
    const c = raw.charCodeAt(j);
    if (c === 0x5c) {
      j += 2; // the escaped character, whatever it is, cannot close the string
      continue;
    }
    if (c === 0x22) return j + 1;
    if (c < 0x20) throw new JsonScanError("control character inside a string", j);
    j++;
  }
  throw new JsonScanError("unterminated string", i);
}

const SCALAR_END = new Set([",", "}", "]", " ", "\n", "\r", "\t"]);

/** Index just after the value that starts at `i` (after whitespace). */
export function skipValue(raw: string, i: number): number {
  const at = skipWhitespace(raw, i);
  const c = raw[at];
  if (c === undefined) throw new JsonScanError("value expected", at);
  if (c === '"') return skipString(raw, at);
  if (c === "{") return walkContainer(raw, at, "}", (j) => skipMember(raw, j));
  if (c === "[") return walkContainer(raw, at, "]", (j) => skipValue(raw, j));
  let j = at;
  while (j < raw.length && !SCALAR_END.has(raw[j] as string)) j++;
  if (j === at) throw new JsonScanError(`unexpected ${JSON.stringify(c)}`, at);
  return j;
}

function skipMember(raw: string, i: number): number {
  return readMember(raw, i).valueSpan.end;
}

function readMember(raw: string, i: number): Member {
  const keyStart = skipWhitespace(raw, i);
  if (raw[keyStart] !== '"') throw new JsonScanError("object key expected", keyStart);
  const keyEnd = skipString(raw, keyStart);
  const colon = skipWhitespace(raw, keyEnd);
  if (raw[colon] !== ":") throw new JsonScanError("':' expected", colon);
  const valueStart = skipWhitespace(raw, colon + 1);
  const valueEnd = skipValue(raw, valueStart);
  return {
    key: JSON.parse(raw.slice(keyStart, keyEnd)) as string,
    keySpan: { start: keyStart, end: keyEnd },
    valueSpan: { start: valueStart, end: valueEnd },
  };
}

/** Walks `{…}` or `[…]` opening at `open`, calling `item` at each element's start. */
function walkContainer(raw: string, open: number, close: string, item: (at: number) => number): number {
  let j = skipWhitespace(raw, open + 1);
  if (raw[j] === close) return j + 1;
  for (;;) {
    j = skipWhitespace(raw, item(j));
    if (raw[j] === ",") {
      j++;
      continue;
    }
    if (raw[j] === close) return j + 1;
    throw new JsonScanError(`',' or '${close}' expected`, j);
  }
}

/**
 * The members of the object whose text is `raw.slice(span)` (the whole text by default), in
 * the order they appear, with their raw spans.
 * @throws JsonScanError `JR2_ERR_CONFORMANCE_NOT_JSON` when the text is not one JSON object
 */
export function objectMembers(raw: string, span: Span = { start: 0, end: raw.length }): Member[] {
  const open = skipWhitespace(raw, span.start);
  if (raw[open] !== "{") throw new JsonScanError("object expected", open);
  const members: Member[] = [];
  const end = walkContainer(raw, open, "}", (j) => {
    const member = readMember(raw, j);
    members.push(member);
    return member.valueSpan.end;
  });
  if (skipWhitespace(raw, end) !== span.end) throw new JsonScanError("trailing text after the object", end);
  return members;
}

/**
 * The spans of the elements of the array at `span`, in order.
 * @throws JsonScanError `JR2_ERR_CONFORMANCE_NOT_JSON` when the span is not one JSON array
 */
export function arrayElements(raw: string, span: Span): Span[] {
  const open = skipWhitespace(raw, span.start);
  if (raw[open] !== "[") throw new JsonScanError("array expected", open);
  const elements: Span[] = [];
  const end = walkContainer(raw, open, "]", (j) => {
    const start = skipWhitespace(raw, j);
    const elementEnd = skipValue(raw, start);
    elements.push({ start, end: elementEnd });
    return elementEnd;
  });
  if (end !== span.end) throw new JsonScanError("array span does not end at its ']'", end);
  return elements;
}

/** The raw text of a span. */
export function textOf(raw: string, span: Span): string {
  return raw.slice(span.start, span.end);
}
