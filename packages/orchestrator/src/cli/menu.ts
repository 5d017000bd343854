import { machineInfoOf } from "../menu/menu.js";
import { loadNotesOf, loadWorkflowFile } from "../serve/workflow-loader.js";

/**
 * `jr2 menu <workflow-file>`: for each Machine of the workflow, each Agent's Menu and each
 * invoking state's derived set, then the walk's warnings — an authoring aid.
 * @throws Jr2Error `JR2_ERR_WORKFLOW_LOAD_FAILED` naming the file
 * @see SPEC §3.2, §3.3
 */
export async function printMenu(file: string): Promise<string> {
  const { name, machine } = await loadWorkflowFile(file);
  const info = machineInfoOf(machine);
  const lines = [`workflow ${name}`];
  for (const { path, machine: m } of info.machines) {
    lines.push(`  Machine ${path === "" ? "(root)" : path}`);
    for (const [agent, a] of Object.entries(machineInfoOf(m).agents)) {
      lines.push(`    Agent ${agent}`);
      lines.push(`      Menu: ${a.menu.map((t) => t.name).join(", ") || "(empty)"}`);
      for (const [state, names] of Object.entries(a.states))
        lines.push(`      ${state}: ${names.join(", ") || "(none)"}`);
    }
  }
  for (const w of info.warnings) lines.push(`  warning ${w.code}: ${w.message}`);
  for (const note of loadNotesOf(machine)) lines.push(`  info: ${note}`);
  return `${lines.join("\n")}\n`;
}
