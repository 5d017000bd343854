/**
 * Import rules for every package's src, run by `pnpm deps` (part of `pnpm test`):
 * no import circles anywhere; the services import @jr2/wire, never each other or another
 * package's src (STYLE.md "Dependencies point one way"); and the Orchestrator's layers
 * (packages/orchestrator/dependency-rules.cjs, ADR-0070).
 */
const { layerRules } = require("./packages/orchestrator/dependency-rules.cjs");

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "an import circle: break it by moving what both sides need below both (ADR-0070)",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-other-package-src",
      comment: "import another package by its name (its exports map), never its src/ or dist/",
      severity: "error",
      from: { path: "^packages/([^/]+)/" },
      to: { dependencyTypes: ["local"], path: "^packages/([^/]+)/(src|dist)/", pathNot: "^packages/$1/" },
    },
    {
      name: "services-apart",
      comment: "the Orchestrator and the Harness meet on the wire (@jr2/wire), never by import",
      severity: "error",
      from: { path: "^packages/(orchestrator|harness)/src/" },
      to: { path: "^packages/(orchestrator|harness|model-sim|conformance)/", pathNot: "^packages/$1/" },
    },
    ...layerRules("packages/orchestrator/src"),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(dist|node_modules)/" },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    tsConfig: { fileName: "tsconfig.tests.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["source", "import", "default"],
    },
  },
};
