/**
 * The Orchestrator's layers and what each may import (ADR-0070), as dependency-cruiser rules.
 * `layerRules(src)` builds them for a source root, so the rule test can run the very same rules
 * over a fixture tree that breaks them.
 *
 * "A may import B" — never the reverse:
 *   xstate/      → (nothing of ours)        the one adapter over xstate internals, the run binding
 *   menu/        → xstate/                  the pure decisions
 *   durability/  → xstate/                  saves, outbox, restore, store/ (over ports, no runs/)
 *   turns/       → menu/ durability/ xstate/
 *   authoring/   → menu/ turns/ xstate/
 *   runs/        → authoring/ turns/ menu/ durability/ xstate/
 *   http/        → runs/ turns/ durability/ authoring/ menu/ xstate/
 *   serve/       → everything but cli/
 *   cli/         → everything
 *   index.ts     → everything (the public entry)
 */
const LAYERS = {
  xstate: [],
  menu: ["xstate"],
  durability: ["xstate"],
  turns: ["menu", "durability", "xstate"],
  authoring: ["menu", "turns", "xstate"],
  runs: ["authoring", "turns", "menu", "durability", "xstate"],
  http: ["runs", "turns", "durability", "authoring", "menu", "xstate"],
  serve: ["http", "runs", "turns", "durability", "authoring", "menu", "xstate"],
  cli: ["serve", "http", "runs", "turns", "durability", "authoring", "menu", "xstate"],
};

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** @param {string} src the source root, relative to the cruise's base dir (e.g. `packages/orchestrator/src`) */
function layerRules(src) {
  const root = `^${escapeRegExp(src)}/`;
  const names = Object.keys(LAYERS);
  const rules = Object.entries(LAYERS).map(([layer, allowed]) => ({
    name: `layer-${layer}`,
    comment: `${layer}/ may import only ${allowed.length ? allowed.map((a) => `${a}/`).join(", ") : "itself"} (ADR-0070)`,
    severity: "error",
    from: { path: `${root}${layer}/` },
    to: {
      path: `${root}`,
      pathNot: [`${root}(${[layer, ...allowed].join("|")})/`],
    },
  }));
  rules.push({
    name: "layer-outside-folders",
    comment: `every source file lives in a layer folder (${Object.keys(LAYERS).join(", ")}) or is the entry index.ts (ADR-0070)`,
    severity: "error",
    from: { path: `${root}`, pathNot: [`${root}(${Object.keys(LAYERS).join("|")})/`, `${root}index\\.ts$`] },
    to: {},
  });
  return rules;
}

module.exports = { LAYERS, layerRules };
