/**
 * The console suite's watched page (issue 12): a Chromium page that records, from before any
 * page script runs, every CSP violation, every request leaving the Orchestrator's origin, every
 * dialog (dismissed) and every page error — and the check that nothing planted ran or loaded.
 */
import type { Browser, Page } from "playwright-core";
import { expect } from "vitest";

/** What the page saw; the suite adds a fresh tab's errors and CSP reports to the same lists. */
export interface PageWatch {
  violations: string[];
  foreign: string[];
  dialogs: string[];
  pageErrors: string[];
}

/** A new page in a new context of `browser`, watched (see the file's header). */
export async function openWatchedPage(
  browser: Browser,
  origin: string,
): Promise<{ page: Page; watch: PageWatch; nothingRanOrLoaded: () => Promise<void> }> {
  const watch: PageWatch = { violations: [], foreign: [], dialogs: [], pageErrors: [] };
  const context = await browser.newContext();
  // Runs before any page script: the page reports every CSP violation here.
  await context.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (e) => {
        (window.__csp ??= []).push(e.violatedDirective + " " + e.blockedURI);
        console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI);
      });`,
  });
  const page = await context.newPage();
  page.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) watch.foreign.push(r.url());
  });
  page.on("console", (m) => {
    if (m.text().startsWith("CSP violation")) watch.violations.push(m.text());
  });
  page.on("dialog", (d) => {
    watch.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("pageerror", (e) => watch.pageErrors.push(String(e.stack ?? e)));

  /** No planted script ran, no planted element exists, nothing left the origin, no CSP violation. */
  async function nothingRanOrLoaded(): Promise<void> {
    expect(await page.evaluate("window.__xss")).toBeUndefined();
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.locator("main script").count()).toBe(0);
    expect(
      await page.locator("main a[href^='javascript'], main a[href^='https://example.com']").count(),
    ).toBe(0);
    expect(watch.dialogs).toEqual([]);
    expect(watch.foreign).toEqual([]);
    expect(watch.violations).toEqual([]);
    expect(await page.evaluate("window.__csp ?? []")).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
  }
  return { page, watch, nothingRanOrLoaded };
}
