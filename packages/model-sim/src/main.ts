#!/usr/bin/env node
import { parseArgs } from "node:util";
import { TEMPLATE_NAMES, type TemplateName } from "./chat-template.js";
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
    "reasoning-field": { type: "string", default: "reasoning" },
    "time-scale": { type: "string" },
    help: { type: "boolean", default: false },
  },
});

if (values.help) {
  process.stdout.write(
    "model-sim — an OpenAI-compatible model simulator (not a model)\n" +
      "usage: model-sim [--port N] [--host 127.0.0.1] [--template qwen3|qwen3.6|llama3]\n" +
      "                 [--block-size 16] [--cache-blocks 65536] [--max-model-len 131072]\n" +
      "                 [--reasoning-field reasoning|reasoning_content]\n" +
      "                 [--time-scale MS]  (time model: 1 simulated second = MS real ms; prefill\n" +
      "                  8000 tok/s, decode 50 tok/s per sequence, KV budget = --cache-blocks)\n" +
      "The requested model name picks the behaviour: <policy>[:<arg>][+<fault>[:<arg>]…][@<template>]\n" +
      "(packages/model-sim/README.md lists them).\n",
  );
  process.exit(0);
}

const field = values["reasoning-field"];
if (field !== "reasoning" && field !== "reasoning_content") {
  process.stderr.write(
    `model-sim: --reasoning-field must be reasoning or reasoning_content, not "${field}"\n`,
  );
  process.exit(2);
}
if (!TEMPLATE_NAMES.includes(values.template as TemplateName)) {
  process.stderr.write(
    `model-sim: --template must be one of ${TEMPLATE_NAMES.join(", ")}, not "${values.template}"\n`,
  );
  process.exit(2);
}

const timeScale = values["time-scale"] === undefined ? undefined : Number(values["time-scale"]);
if (timeScale !== undefined && !(timeScale > 0)) {
  process.stderr.write(
    `model-sim: --time-scale must be a number of ms > 0 (e.g. 20), not "${values["time-scale"]}"\n`,
  );
  process.exit(2);
}

const sim = await startModelSim({
  ...(timeScale === undefined ? {} : { timeScale }),
  reasoningField: field,
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
