/**
 * The browser the console suite drives: Debian's Chromium through playwright-core (never
 * `playwright install`: its download fails here). `JR2_CHROMIUM` overrides the path. Under
 * `CI=true` a missing Chromium is a failure, never a skip (issue 12 rules).
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Where Chromium is looked for: `JR2_CHROMIUM`, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM = process.env.JR2_CHROMIUM ?? "/usr/bin/chromium";

/** Why the suite cannot run here, or null. Throws under CI: there the browser must be installed. */
export function browserMissing(): string | null {
  if (existsSync(CHROMIUM)) return null;
  const why = `no Chromium at ${CHROMIUM}: apt-get install chromium (or set JR2_CHROMIUM)`;
  if (process.env.CI === "true")
    throw new Error(`the console's browser suite needs Chromium under CI: ${why}`);
  return why;
}

/** Headless Chromium; `--no-sandbox` because CI runs as root. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu"],
  });
}
