/**
 * `escapeModelText` (issue 25 §7, issue 24 §8): every character a terminal acts on comes out as
 * a visible escape — nothing of a name a model wrote can start a new line, move the cursor,
 * colour, retitle or reorder what an operator reads.
 */
import { describe, expect, it } from "vitest";
import { escapeModelText } from "../src/index.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const ACTS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("escapeModelText", () => {
  it("writes newline, CR and tab as \\n \\r \\t inside a line", () => {
    expect(escapeModelText("x\n09:00:00  pick      a#b  approve → moved, turn complete\r\t")).toBe(
      "x\\n09:00:00  pick      a#b  approve → moved, turn complete\\r\\t",
    );
  });

  it("writes ESC, BEL, NUL, DEL and C1 controls as \\xHH", () => {
    expect(escapeModelText("bash\u001b]0;pwned\u0007\u0000\u007f\u009b2J")).toBe(
      "bash\\x1b]0;pwned\\x07\\x00\\x7f\\x9b2J",
    );
  });

  it("writes every bidi control and U+2028/U+2029 as \\u{XXXX}", () => {
    const bidi = [0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e];
    const isolates = [0x2066, 0x2067, 0x2068, 0x2069];
    for (const code of [...bidi, ...isolates]) {
      const out = escapeModelText(`a${String.fromCharCode(code)}b`);
      expect(out).toBe(`a\\u{${code.toString(16).toUpperCase()}}b`);
      expect(out).not.toMatch(ACTS);
    }
  });

  it("keeps newline and tab for a block when asked, escaping the rest", () => {
    expect(escapeModelText("one\r\n\ttwo\r\u202Eevil\u001b[2K", { lines: "keep" })).toBe(
      "one\n\ttwo\\r\\u{202E}evil\\x1b[2K",
    );
  });

  it("leaves ordinary text, other scripts and emoji as they are", () => {
    const plain = 'approve {"summary":"ça va — שלום 你好 🎉 \\\\n"}';
    expect(escapeModelText(plain)).toBe(plain);
  });
});
