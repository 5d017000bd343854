// Checks an Orchestrator serves the web console (issue 12): GET <url>/ui/ answers 200 under the
// CSP, and the script bundle the page names answers 200. Used by compose-smoke.sh on the image.
// Usage: node scripts/console-served.mjs http://127.0.0.1:7400
const url = process.argv[2];
try {
  const page = await fetch(`${url}/ui/`);
  const csp = page.headers.get("content-security-policy") ?? "";
  const html = await page.text();
  if (page.status !== 200 || !csp.includes("default-src 'self'"))
    throw new Error(`${url}/ui/ answered ${page.status} with CSP "${csp}"`);
  const asset = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  if (!asset) throw new Error(`${url}/ui/ names no script bundle`);
  const js = await fetch(`${url}${asset}`);
  if (js.status !== 200) throw new Error(`${url}${asset} answered ${js.status}`);
  console.log(`web console served at ${url}/ui/ (CSP on, ${asset} found)`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
