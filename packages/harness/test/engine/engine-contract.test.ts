/**
 * The Engine seam's one implementation today, the pi seat (engine/pi/), passes the contract
 * (engine-contract.ts) twice: as it is, steering the restatement between steps; and with its
 * `steer` hidden, so the Turn's fallback puts the restatement on the next receipt — the path a
 * second engine without a between-steps input (an external agent loop) would take.
 */
import { createSeat, type RunRequest } from "../../src/engine/pi/engine-pi.js";
import { createEndpointLimiter } from "../../src/provider/limiter.js";
import { DEFAULT_RETRY, toPiModel } from "../../src/provider/models.js";
import { MENU } from "../fixtures/fake-orchestrator.js";
import { engineContract } from "./engine-contract.js";

const seatOn = (baseUrl: string) => {
  const seat = createSeat({
    systemPrompt: "s",
    workingTools: [],
    menu: MENU,
    cwd: undefined,
    limiter: createEndpointLimiter(1),
    temperature: 0,
    lintMode: "strict",
  });
  const entry = { baseUrl, id: "m", contextWindow: 8192, maxTokens: 256 };
  return { seat, model: toPiModel("sim", entry) };
};

let model: RunRequest["model"];
const request = (hooks: RunRequest["hooks"], userText: string): RunRequest => ({
  userText,
  userPart: { part: "prompt" },
  model,
  entry: "sim",
  policy: DEFAULT_RETRY,
  apiKey: "k",
  thinkingLevel: "off",
  maxSteps: 8,
  hooks,
});

engineContract<RunRequest>("pi (steers)", {
  make(baseUrl) {
    const made = seatOn(baseUrl);
    model = made.model;
    return made.seat;
  },
  request,
});

engineContract<RunRequest>("pi without steer (the restatement rides the next receipt)", {
  make(baseUrl) {
    const made = seatOn(baseUrl);
    model = made.model;
    const { run, abort, messages } = made.seat;
    return { run, abort, messages };
  },
  request,
});
