/**
 * The Harness's folders and what each may import (ADR-0160), as dependency-cruiser rules.
 * `harnessLayerRules(src)` builds them for a source root, so the rule test can run the very same
 * rules over a fixture tree that breaks them.
 *
 * "A may import B" — never the reverse ("types" = type-only imports, erased at build):
 *   telemetry/      → provider/ (types)       spans and metrics over the shapes they record
 *   orchestrator/   → (nothing of ours)       the Orchestrator client and its URLs
 *   presenters/     → (nothing of ours)       menu.ts, the Briefing, presenters/pi/
 *   workspace/      → telemetry/              (room) git: Repo Slots, Worktrees, commits, push
 *   provider/       → telemetry/, transcript/ (types)   requests to the model server
 *   transcript/     → provider/               the conversation's record
 *   tools/          → provider/ workspace/ telemetry/   the Working tools
 *   engine/         → presenters/ provider/ transcript/ tools/ telemetry/
 *   turn/           → engine/ presenters/ provider/ transcript/ tools/ orchestrator/ workspace/ telemetry/
 *   conversations/  → turn/ and everything turn/ may import
 *   wire/           → everything
 *   main.ts, index.ts → everything (the bin and the public entry)
 * Inside the two seams, the engine-neutral files (engine/*.ts, presenters/*.ts) import no
 * implementation folder (engine/pi/, presenters/pi/): a second engine or presenter is a sibling.
 */
const BELOW_TURN = [
  "engine",
  "presenters",
  "provider",
  "transcript",
  "tools",
  "orchestrator",
  "workspace",
  "telemetry",
];
const LAYERS = {
  telemetry: { may: [], types: ["provider"] },
  orchestrator: { may: [] },
  presenters: { may: [] },
  workspace: { may: ["telemetry"] },
  provider: { may: ["telemetry"], types: ["transcript"] },
  transcript: { may: ["provider"] },
  tools: { may: ["provider", "workspace", "telemetry"] },
  engine: { may: ["presenters", "provider", "transcript", "tools", "telemetry"] },
  turn: { may: BELOW_TURN },
  conversations: { may: ["turn", ...BELOW_TURN] },
  wire: { may: ["conversations", "turn", ...BELOW_TURN] },
};

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** @param {string} src the source root, relative to the cruise's base dir (e.g. `packages/harness/src`) */
function harnessLayerRules(src) {
  const root = `^${escapeRegExp(src)}/`;
  const list = (names) => (names.length ? names.map((a) => `${a}/`).join(", ") : "nothing of ours");
  const rules = [];
  for (const [layer, { may, types = [] }] of Object.entries(LAYERS)) {
    rules.push({
      name: `harness-${layer}`,
      comment: `harness ${layer}/ may import only ${list(may)}${types.length ? ` (and types of ${list(types)})` : ""} (ADR-0160)`,
      severity: "error",
      from: { path: `${root}${layer}/` },
      // A types-only folder passes this rule and is held by the `-types-only` rule below.
      to: { path: root, pathNot: [`${root}(${[layer, ...may, ...types].join("|")})/`] },
    });
    if (types.length)
      rules.push({
        name: `harness-${layer}-types-only`,
        comment: `harness ${layer}/ imports only types of ${list(types)}, never their code (ADR-0160)`,
        severity: "error",
        from: { path: `${root}${layer}/` },
        to: { path: `${root}(${types.join("|")})/`, dependencyTypesNot: ["type-only"] },
      });
  }
  rules.push({
    name: "harness-seam-neutral",
    comment:
      "engine/*.ts and presenters/*.ts are engine-neutral: they import no implementation folder (ADR-0160)",
    severity: "error",
    from: { path: `${root}(engine|presenters)/[^/]+$` },
    to: { path: `${root}(engine|presenters)/[^/]+/` },
  });
  rules.push({
    name: "harness-outside-folders",
    comment: `every Harness source file lives in a folder of the table (${Object.keys(LAYERS).join(", ")}) or is main.ts or index.ts (ADR-0160)`,
    severity: "error",
    from: {
      path: root,
      pathNot: [`${root}(${Object.keys(LAYERS).join("|")})/`, `${root}(index|main)\\.ts$`],
    },
    to: {},
  });
  return rules;
}

module.exports = {
  LAYERS: Object.fromEntries(Object.entries(LAYERS).map(([k, v]) => [k, v.may])),
  harnessLayerRules,
};
