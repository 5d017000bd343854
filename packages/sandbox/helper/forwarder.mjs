// The in-sandbox egress forwarder (issue 26 item 4, ADR-0171). Runs as the sandbox's first
// process when the run has a network allow list: listens on 127.0.0.1:<port> inside the
// sandbox's own network namespace and relays each connection to the run's egress proxy, whose
// Unix socket is bound into the sandbox; then starts the tool with HTTP(S)_PROXY pointing here
// and exits with its status. Plain JavaScript, no dependencies: it runs on the host's node
// binary inside the sandbox. Usage: node forwarder.mjs <socket> <port> -- <argv...>
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { constants } from "node:os";

const [socketPath, port, dashes, ...argv] = process.argv.slice(2);
if (!socketPath || !port || dashes !== "--" || argv.length === 0) {
  process.stderr.write("usage: forwarder.mjs <socket> <port> -- <argv...>\n");
  process.exit(2);
}
const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream).pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", end);
  upstream.on("error", end);
});
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(argv[0], argv.slice(1), { stdio: "inherit" });
  child.on("error", (err) => {
    process.stderr.write(`jr2 sandbox: cannot start ${argv[0]}: ${err.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    process.exit(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
  });
});
