import type { Engine, EngineHooks } from "./engine.js";

/**
 * The Turn's hooks as an engine gets them (ADR-0160, seed step boundaries): unchanged for an
 * engine that can `steer` (it places the `boundary` restatement between steps itself); for one
 * that cannot, the seed's fallback — the restatement is held and rides the next receipt (a
 * pick's answer or a not-run call's), after the receipt's own text, once. A turn-over receipt
 * carries none (the model must call no further tool), and an answer cut off with no call is not
 * asked to go on (only a steering engine can place that between steps; the wake asks again).
 * @see SPEC §7.5
 */
export function hooksFor(engine: Pick<Engine, "steer">, hooks: EngineHooks): EngineHooks {
  if (engine.steer) return hooks;
  let pending: string | undefined;
  const ride = (receipt: string): string => {
    if (pending === undefined) return receipt;
    const text = `${receipt}\n${pending}`;
    pending = undefined;
    return text;
  };
  return {
    ...hooks,
    async menuCall(call) {
      const answered = await hooks.menuCall(call);
      if (answered.turnOver) {
        pending = undefined;
        return answered;
      }
      return { ...answered, text: ride(answered.text) };
    },
    notRun(reason, name, detail) {
      return ride(hooks.notRun(reason, name, detail));
    },
    async boundary(modelStopped) {
      const restatement = await hooks.boundary(modelStopped);
      if (restatement !== undefined) pending = restatement;
      return undefined;
    },
    outputCut() {
      return undefined;
    },
  };
}
