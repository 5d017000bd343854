/**
 * `jr2 serve` on PostgreSQL checks that JR2_ADVERTISE_URL reaches itself (ADR-0280; a newcomer
 * typo'd the port and its runs sat unreachable through every peer with no word at start).
 */
import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { BOOT_HEADER, BOOT_ID } from "../src/http/boot-id.js";
import { checkAdvertisedUrl } from "../src/serve/advertise-check.js";

function logger() {
  const lines: string[] = [];
  return {
    lines,
    info: (_obj: unknown, msg?: string) => lines.push(`info ${msg}`),
    error: (_obj: unknown, msg?: string) => lines.push(`error ${msg}`),
  } as never as { lines: string[]; info(): void; error(): void };
}

/** A server answering /healthz with `boot` as its boot id (or none). */
async function serving(boot: string | undefined): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, boot ? { [BOOT_HEADER]: boot } : {});
    res.end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, server };
}

describe("the advertised URL's check at start-up", () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  it("is quiet (info) when the URL answers with this process's boot id", async () => {
    const self = await serving(BOOT_ID);
    servers.push(self.server);
    const log = logger();
    expect(await checkAdvertisedUrl(self.url, log as never)).toBe(true);
    expect(log.lines.join("\n")).not.toMatch(/^error/m);
  });

  it("names JR2_ADVERTISE_URL and the fix when another instance, something else or nothing answers", async () => {
    const peer = await serving("another-boot");
    const other = await serving(undefined);
    servers.push(peer.server, other.server);
    const closed = await serving(undefined);
    await new Promise<void>((r) => closed.server.close(() => r()));
    for (const [url, said] of [
      [peer.url, "another jr2 instance answered there"],
      [other.url, "something else answered there (HTTP 200)"],
      [closed.url, "nothing answered there (ECONNREFUSED)"],
    ] as const) {
      const log = logger();
      expect(await checkAdvertisedUrl(url, log as never)).toBe(false);
      const text = log.lines.join("\n");
      expect(text).toContain(`error JR2_ADVERTISE_URL ${url} does not reach this instance: ${said}`);
      expect(text).toContain("set JR2_ADVERTISE_URL to the URL the other instances reach this one at");
    }
  });
});
