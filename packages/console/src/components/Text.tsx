/**
 * Untrusted text (issue 12 rules): everything from the API — model text and reasoning, tool
 * arguments, Gate `meta`, error messages, descriptions — is rendered through these, as React
 * text nodes only: no innerHTML, no Markdown, no href or src from data. `<bdi>` isolates a
 * right-to-left override so it cannot reorder the page around it.
 */
/** A block of untrusted text, whitespace kept. */
export function TextBlock({ text, className }: { text: string; className?: string }) {
  return (
    <pre className={`text ${className ?? ""}`}>
      <bdi>{text}</bdi>
    </pre>
  );
}

/** Inline untrusted text. */
export function Inline({ text }: { text: string }) {
  return <bdi className="inline">{text}</bdi>;
}

/** Any JSON value as indented text. */
export function Json({ value }: { value: unknown }) {
  return <TextBlock text={value === undefined ? "—" : JSON.stringify(value, null, 2)} className="json" />;
}

/** A JSON text (tool arguments) pretty-printed when it parses, else shown exactly. */
export function JsonText({ text }: { text: string }) {
  try {
    return <TextBlock text={JSON.stringify(JSON.parse(text), null, 2)} className="json" />;
  } catch {
    return <TextBlock text={text} className="json invalid" />;
  }
}

/** A token count: `null` reads "unknown" (never 0, ADR-0400). */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? "unknown" : String(n);
}

/** A state value in one line: `"done"`, `{"working":"review"}` → `working.review`. */
export function stateText(value: unknown): string {
  if (value === undefined || value === null) return "—";
  if (typeof value === "string") return value;
  if (typeof value === "object")
    return Object.entries(value)
      .map(([k, v]) => {
        const inner = stateText(v);
        return inner === "—" || (typeof v === "object" && v !== null && Object.keys(v).length === 0)
          ? k
          : `${k}.${inner}`;
      })
      .join(", ");
  return String(value);
}
