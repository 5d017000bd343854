#!/usr/bin/env node
import { parseArgs } from "node:util";
import type { TemplateName } from "./chat-template.js";
import { startModelSim } from "./start.js";

// The model-sim bin: an OpenAI-compatible model SIMULATOR (not a model), for tests and demos.
const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    template: { type: "string", default: "qwen3" },
    "block-size": { type: "string", default: "16" },
    "cache-blocks": { type: "string", default: "65536" },
    "max-model-len": { type: "string", default: "131072" },
    help: { type: "boolean", default: false },
  },
});

if (values.help) {
  process.stdout.write(
    "model-sim — an OpenAI-compatible model simulator (not a model)\n" +
      "usage: model-sim [--port N] [--host 127.0.0.1] [--template qwen3|llama3]\n" +
      "                 [--block-size 16] [--cache-blocks 65536] [--max-model-len 131072]\n",
  );
  process.exit(0);
}

const sim = await startModelSim({
  port: Number(values.port),
  host: values.host,
  template: values.template as TemplateName,
  blockSize: Number(values["block-size"]),
  cacheBlocks: Number(values["cache-blocks"]),
  maxModelLen: Number(values["max-model-len"]),
  logger: { level: "info", name: "model-sim (simulator)" },
});
process.stdout.write(`model-sim listening on ${sim.url}\n`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void sim.close().then(() => process.exit(0));
  });
}
