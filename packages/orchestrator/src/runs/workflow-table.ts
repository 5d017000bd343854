/**
 * The workflows a run host serves, read once when it is created: each one's walk (its Menus,
 * input schema and fingerprint), and the two answers built from it — `GET /workflows` and
 * `GET /workflows/:name/menu`.
 * @see SPEC §4.1
 */
import { Jr2Error, type WorkflowMenu, type WorkflowSummary } from "@jr2/wire";
import type { Logger } from "pino";
import type { AnyStateMachine } from "xstate";
import { type MachineInfo, machineInfoOf } from "../menu/menu.js";

/** The workflows a host serves: name → Machine (a module's base name, §4.1). */
export type WorkflowTable = ReadonlyMap<string, AnyStateMachine>;

/** Each served workflow's walk, by name. */
export type WorkflowInfos = ReadonlyMap<string, MachineInfo>;

/** Walks every workflow of `workflows` once, logging each one's walk warnings once. */
export function readWorkflows(workflows: WorkflowTable, log: Logger): WorkflowInfos {
  const infos = new Map<string, MachineInfo>();
  for (const [name, machine] of workflows) {
    const info = machineInfoOf(machine);
    infos.set(name, info);
    for (const warning of info.warnings) log.warn({ workflow: name, code: warning.code }, warning.message);
  }
  return infos;
}

/** The walk of workflow `name`. @throws JR2_ERR_WORKFLOW_NOT_FOUND (naming the known ones) */
export function workflowInfo(infos: WorkflowInfos, name: string): MachineInfo {
  const info = infos.get(name);
  if (!info) throw new Jr2Error("JR2_ERR_WORKFLOW_NOT_FOUND", { workflow: name, known: [...infos.keys()] });
  return info;
}

/** `GET /workflows`: each workflow's input JSON Schema and its Machines' agents. */
export function listWorkflows(infos: WorkflowInfos): WorkflowSummary[] {
  return [...infos].map(([name, info]) => ({
    name,
    input: (info.inputJsonSchema as Record<string, unknown> | null) ?? null,
    machines: info.machines.map((m) => ({
      path: m.path,
      agents: Object.keys(machineInfoOf(m.machine).agents),
    })),
  }));
}

/** `GET /workflows/:name/menu`: one entry per Machine. @throws JR2_ERR_WORKFLOW_NOT_FOUND */
export function workflowMenu(infos: WorkflowInfos, name: string): WorkflowMenu {
  const info = workflowInfo(infos, name);
  return {
    machines: info.machines.map(({ path, machine }) => {
      const agents = machineInfoOf(machine).agents;
      return {
        path,
        agents: Object.fromEntries(
          Object.entries(agents).map(([agent, a]) => [agent, { menu: a.menu, states: a.states }]),
        ),
      };
    }),
  };
}
