/**
 * `jr2 follow … | head -1`: once the reader closes the pipe, a write fails with EPIPE (an
 * `error` event on stdout, which unhandled ends the process with a stack trace). The CLI exits
 * quietly with 0 instead: the reader had what it wanted. Other write errors are reported.
 */

/** Makes `stream` (default stdout) end the process with `exit(0)` on EPIPE, saying nothing. */
export function exitQuietlyOnClosedPipe(
  stream: NodeJS.WriteStream = process.stdout,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") return exit(0);
    process.stderr.write(`jr2: writing the output failed: ${error.message}\n`);
    exit(1);
  });
}
