/**
 * One Repo Slot as authored (issue 28 §1): the repository's URL — a string, or a function of
 * the workspace's persisted input resolved once when the workspace starts — the ref to start
 * from (default the remote's HEAD) and where publish pushes (default `url`).
 */
export interface RepoSlot {
  url: string | ((args: { input: unknown }) => string);
  ref?: string;
  /** Where publish pushes (default `url`): a string, or a function of the input like `url`. */
  pushUrl?: string | ((args: { input: unknown }) => string);
  /**
   * Submodules at the start commit (ADR-0216): `"skip"` (default) leaves each as an empty
   * directory, as `git clone` without `--recurse-submodules` does, and the feed names them;
   * `"refuse"` fails the workspace at start naming them. jr2 never checks a submodule out.
   */
  submodules?: "skip" | "refuse";
}

/** The slots of a workspace, by slot name (`{ app: { url } }`). */
export type RepoSlots = Record<string, RepoSlot>;

// A slot name is a path component and a ref component at once (the Harness checks again).
const SLOT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * Checks the authored slots at definition time.
 * @throws Error naming the slot and the form expected
 */
export function checkRepos(repos: RepoSlots): void {
  if (typeof repos !== "object" || repos === null || Array.isArray(repos))
    throw new Error('workspace repos must be an object of slots, e.g. { app: { url: "https://…" } }');
  const names = Object.keys(repos);
  if (names.length === 0)
    throw new Error("workspace repos names no slot; leave `repos` out for a plain workspace");
  for (const name of names) {
    if (!SLOT_NAME.test(name))
      throw new Error(
        `Repo Slot name \`${name}\` must be letters, digits, \`_\` or \`-\` (≤ 64), starting with a letter or digit`,
      );
    const slot = repos[name] as RepoSlot;
    if (typeof slot?.url !== "string" && typeof slot?.url !== "function")
      throw new Error(`Repo Slot \`${name}\` needs a url: a string or ({ input }) => string`);
    if (slot.ref !== undefined && (typeof slot.ref !== "string" || slot.ref === ""))
      throw new Error(`Repo Slot \`${name}\`'s ref must be a non-empty string`);
    if (slot.pushUrl !== undefined && typeof slot.pushUrl !== "string" && typeof slot.pushUrl !== "function")
      throw new Error(`Repo Slot \`${name}\`'s pushUrl must be a string or ({ input }) => string`);
    if (slot.submodules !== undefined && slot.submodules !== "skip" && slot.submodules !== "refuse")
      throw new Error(
        `Repo Slot \`${name}\`'s submodules must be "skip" or "refuse", got ${JSON.stringify(slot.submodules)}`,
      );
  }
}

/** A slot as the attach step sends it to the Harness. */
export type ResolvedRepoSlot = {
  url: string;
  ref?: string;
  pushUrl?: string;
  submodules?: "skip" | "refuse";
};

/**
 * The slots with their URLs resolved from the workspace's input (once, by the attach step).
 * @throws Error naming the slot when its url function throws or returns no string
 */
export function resolveRepos(repos: RepoSlots, input: unknown): Record<string, ResolvedRepoSlot> {
  const out: Record<string, ResolvedRepoSlot> = {};
  for (const [name, slot] of Object.entries(repos)) {
    const url = typeof slot.url === "function" ? slot.url({ input }) : slot.url;
    if (typeof url !== "string" || url === "")
      throw new Error(
        `Repo Slot \`${name}\`'s url function returned ${JSON.stringify(url)}; it must return the repository's URL`,
      );
    const pushUrl = typeof slot.pushUrl === "function" ? slot.pushUrl({ input }) : slot.pushUrl;
    out[name] = {
      url,
      ...(slot.ref === undefined ? {} : { ref: slot.ref }),
      ...(slot.submodules === undefined ? {} : { submodules: slot.submodules }),
      // A function answering undefined or "" means: push to `url`.
      ...(typeof pushUrl === "string" && pushUrl !== "" ? { pushUrl } : {}),
    };
  }
  return out;
}
