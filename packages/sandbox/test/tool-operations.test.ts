import { describe, expect, it } from "vitest";
import { sniffImageMimeType } from "../src/index.js";

describe("sniffImageMimeType (pi's read tool attaches these as images)", () => {
  it("knows PNG, JPEG, GIF and WebP by their first bytes, and nothing else", () => {
    expect(sniffImageMimeType(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]))).toBe(
      "image/png",
    );
    expect(sniffImageMimeType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffImageMimeType(Buffer.from("GIF89a"))).toBe("image/gif");
    expect(sniffImageMimeType(Buffer.from("RIFF\0\0\0\0WEBPVP8 "))).toBe("image/webp");
    expect(sniffImageMimeType(Buffer.from("export const a = 1;"))).toBeNull();
  });
});
