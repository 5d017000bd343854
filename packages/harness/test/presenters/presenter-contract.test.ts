/**
 * The Presenter seam's one implementation today, pi's (presenters/pi/pi-presenter.ts, the one
 * the seat builds its tools block and user messages through), passes the contract — with no
 * Working tools and with a seat's Working tools ahead of the Menu.
 */

import { piPresenter } from "../../src/presenters/pi/pi-presenter.js";
import { createRedactor } from "../../src/tools/secret-redaction.js";
import { createWorkingTools } from "../../src/tools/working-tools.js";
import { presenterContract } from "./presenter-contract.js";

presenterContract("pi, Menu only", piPresenter());
presenterContract(
  "pi, after a seat's Working tools",
  piPresenter(await createWorkingTools("write", "/tmp", createRedactor([]))),
);
