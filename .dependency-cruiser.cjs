/**
 * Import rules for every package's src, run by `pnpm deps` (part of `pnpm test`):
 * no import circles anywhere; the services import @jr2/wire, never each other or another
 * package's src (STYLE.md "Dependencies point one way"); and the Orchestrator's layers
 * (packages/orchestrator/dependency-rules.cjs, ADR-0070) and the Harness's folders
 * (packages/harness/dependency-rules.cjs, ADR-0160).
 */
const { layerRules } = require("./packages/orchestrator/dependency-rules.cjs");
const { harnessLayerRules } = require("./packages/harness/dependency-rules.cjs");

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
    {
      name: "not-to-dist",
      comment: "src imports src: a built file (dist/) hides the real dependency from these rules",
      severity: "error",
      from: { path: "^packages/[^/]+/src/" },
      to: { path: "(^|/)dist/" },
    },
    {
      name: "not-to-unresolvable",
      comment:
        "an import these rules cannot resolve cannot be checked: declare the dependency or fix the path",
      severity: "error",
      from: { path: "^packages/[^/]+/src/" },
      to: { couldNotResolve: true },
    },
    ...layerRules("packages/orchestrator/src"),
    ...harnessLayerRules("packages/harness/src"),
  ],
  options: {
    // dist/ is followed no further but still seen, so an import into it (a package.json
    // `imports` alias, a relative path) is reported rather than silently dropped.
    doNotFollow: { path: "(^|/)(dist|node_modules)/" },
    exclude: { path: "(^|/)node_modules/" },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    tsConfig: { fileName: "tsconfig.tests.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["source", "import", "default"],
    },
  },
};
