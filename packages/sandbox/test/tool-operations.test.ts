import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runToolOperations, sniffImageMimeType } from "../src/index.js";
import { bwrapArguments } from "../src/mounts.js";

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

describe("a run's directory swapped for a symlink after its tools were made (ADR-0227)", () => {
  it("bash and find refuse to start, naming where the directory now leads; nothing runs there", async () => {
    const base = mkdtempSync(join(tmpdir(), "jr2-pinned-root-"));
    try {
      const root = join(base, "run");
      const elsewhere = join(base, "another-run");
      mkdirSync(root);
      mkdirSync(elsewhere);
      const ops = await runToolOperations({ root, access: "write", env: {} });
      renameSync(root, `${root}.orig`);
      symlinkSync(elsewhere, root);
      const bash = ops.bash.exec("touch planted", root, { onData: () => undefined });
      await expect(bash).rejects.toThrow(`it now resolves to \`${elsewhere}\`, not \`${root}\``);
      await expect(ops.find.glob("*", root, { ignore: [], limit: 10 })).rejects.toThrow(/resolves/);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("bwrap binds the root from the real path it was given, at the path the tools use", () => {
    const args = bwrapArguments(
      { root: "/work/run-1/main/app", access: "write" },
      { network: "none", cwd: "/work/run-1/main/app", rootSource: "/data/work/run-1/main/app" },
    );
    const at = args.indexOf("/data/work/run-1/main/app");
    expect(args.slice(at - 1, at + 2)).toEqual([
      "--bind",
      "/data/work/run-1/main/app",
      "/work/run-1/main/app",
    ]);
  });
});
