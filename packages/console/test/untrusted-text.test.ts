/**
 * A guard over the console's source (issue 12 rules): no path from data to markup or code —
 * no innerHTML, no Markdown renderer, no EventSource (it cannot send the bearer), no eval.
 * The browser suite proves the running page; this keeps a later edit from opening a door.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../src/", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.(ts|tsx)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

const FORBIDDEN = [
  "dangerouslySetInnerHTML",
  "innerHTML",
  "outerHTML",
  "insertAdjacentHTML",
  "document.write",
  "new EventSource",
  "eval(",
  "new Function",
  "localStorage",
  "?token=",
];

describe("the console's source", () => {
  it("has no way from API data to markup, code or a URL token", () => {
    const files = sources(src);
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((file) => {
      const text = readFileSync(file, "utf8").replace(/^\s*(\/\/|\*).*$/gm, "");
      return FORBIDDEN.filter((word) => text.includes(word)).map((word) => `${file}: ${word}`);
    });
    expect(found).toEqual([]);
  });

  it("sets href only from the console's own routes (wouter Links), never from data — but the forge link", () => {
    // The one exception (ADR-0225): the branch panel's forge link, built by the Orchestrator from
    // the operator's checked template, rendered only as an http(s) URL and opened without opener.
    const forge = join(src, "components", "Branches.tsx");
    const others = sources(src).filter((file) => file !== forge);
    const raw = others.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\b(href|src)=\{/g)].map(() => file),
    );
    const links = others.flatMap((file) => [...readFileSync(file, "utf8").matchAll(/<a\s/g)].map(() => file));
    expect(links).toEqual([]);
    // Every `href={…}` is a wouter <Link> to a path built from encoded ids.
    for (const file of new Set(raw)) expect(readFileSync(file, "utf8")).toContain('from "wouter"');
    const text = readFileSync(forge, "utf8");
    expect(text.match(/<a\s/g)).toHaveLength(1);
    expect(text.match(/\b(href|src)=\{/g)).toHaveLength(1);
    expect(text).toContain(
      '<a className="forge-link" href={href} target="_blank" rel="noopener noreferrer">',
    );
    expect(text).toContain("const href = repo.link ? safeHref(repo.link) : null;");
    expect(text).toContain('return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;');
  });
});
