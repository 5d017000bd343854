// Benchmark-only memory probe (bench/soak.mjs), preloaded into a service with
// `node --expose-gc --require bench/soak-probe.cjs …`: an HTTP listener on 127.0.0.1 (an OS-chosen
// port, printed as `jr2 soak probe at http://…`) whose `GET /memory`, with
// `Authorization: Bearer $JR2_SOAK_PROBE_TOKEN`, forces full collections and answers
// `process.memoryUsage()` in bytes. Nothing of it is in the shipped services.
"use strict";
const http = require("node:http");

const token = process.env.JR2_SOAK_PROBE_TOKEN;
if (token && typeof global.gc === "function") {
  const server = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}` || req.url !== "/memory") {
      res.writeHead(req.headers.authorization === `Bearer ${token}` ? 404 : 401).end();
      return;
    }
    // Two passes: the first may only queue finalizers and weak callbacks.
    global.gc();
    global.gc();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(process.memoryUsage()));
  });
  server.listen(0, "127.0.0.1", () => {
    process.stderr.write(`jr2 soak probe at http://127.0.0.1:${server.address().port}\n`);
  });
  server.unref();
}
