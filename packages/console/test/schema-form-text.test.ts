/**
 * rjsf renders a few of its own messages through Markdown (an unsupported field, an invalid
 * object field) with names taken from the schema interpolated. A schema is API data (issue 12:
 * text only, no href or src from data): the console's form must render those names as text.
 */

import Form from "@rjsf/core/lib/components/Form.js";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { textOnlyFormProps } from "../src/form-text.js";

const render = (schema: Record<string, unknown>): string =>
  renderToStaticMarkup(
    // The props SchemaForm passes (its own file is .tsx, outside the tests' type check).
    createElement(Form, { ...textOnlyFormProps, schema, idPrefix: "start", noHtml5Validate: true }),
  );

describe("the schema form renders schema text as text", () => {
  it("turns no property name of an unsupported field into a link or an image", () => {
    const html = render({
      type: "object",
      properties: {
        "[click](https://evil.example/x)": { type: "[c](https://evil.example/x)" },
        "![p](https://evil.example/p.png)": { type: "![i](https://evil.example/i.png) <b>x</b>" },
      },
    });
    expect(html).toContain("unsupported-field");
    expect(html).not.toMatch(/<a\b|<img\b|href=|src=/);
    expect(html).toContain("Unknown field type [c](https://evil.example/x)");
  });

  it("keeps titles, descriptions, defaults and enum values as text", () => {
    const planted = '<img src=x onerror="alert(1)">';
    const html = render({
      type: "object",
      title: planted,
      description: "[md](javascript:alert(1))",
      properties: {
        a: { type: "string", title: planted, description: planted, default: planted },
        b: { type: "string", enum: [planted, "javascript:alert(1)"] },
      },
    });
    expect(html).not.toMatch(/<img\b|<a\b|href=/);
    expect(html).toContain("&lt;img src=x");
  });
});
