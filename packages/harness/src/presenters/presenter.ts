import type { Tool } from "@jr2/wire";

/**
 * The seam between the Menu and an engine's tool API (seed ADR-0029, ADR-0160). A presenter maps
 * Menu items to its engine's tools — every Menu item, in Menu order, its name, description and
 * parameters verbatim (the tools block is the cached prefix; it never changes with the Allowed
 * picks) — and places the texts it is handed as messages of that API: a receipt as a call's
 * result, the Allowed-picks text (Turn part, restatement, nudge) as a user message. It never
 * composes model-facing text: every text comes from menu.ts and briefing.ts, and `read*` must
 * give back exactly the text handed. Today's one presenter is pi's (presenters/pi/); a second
 * (MCP tools fixed per session, the prompt as text) passes test/presenters/presenter-contract.ts.
 */
export interface Presenter<EngineTool, Receipt, Message> {
  /** The tools block for `menu`: the engine's tools, Menu items verbatim and in Menu order. */
  tools(menu: readonly Tool[]): EngineTool[];
  /** A receipt (menu.ts's text for a pick's answer or a call not run) as the call's result. */
  placeReceipt(text: string): Receipt;
  /** The Allowed-picks text or a prompt (briefing.ts, menu.ts) as a user message. */
  placeText(text: string): Message;
  /** What the model reads of a placed receipt. */
  readReceipt(receipt: Receipt): string;
  /** What the model reads of a placed message. */
  readText(message: Message): string;
  /** The Menu item names an engine tool presents, in order (Working tools are not Menu items). */
  menuNames(tools: readonly EngineTool[]): string[];
}
