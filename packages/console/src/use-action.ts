/**
 * One operator action's state in the console (retry, resume, cancel, a Gate answer): whether
 * it is in flight and what it said. Every control used to repeat the same busy/said/try-catch;
 * this keeps the rule in one place: a call clears the last message, a success says its text,
 * a failure says the server's message unless the caller handled that error itself.
 */
import { useState } from "react";

/** What an action said: `ok: false` is shown as an alert. */
export interface Said {
  ok: boolean;
  text: string;
}

/** Text of anything thrown: an `ApiError`'s message already names the code and the fix. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export interface Action {
  busy: boolean;
  said: Said | null;
  /**
   * Runs `work`; its string result is said as a success (null: nothing said). A thrown error
   * is said as a failure unless `handled(error)` returns true.
   */
  run(work: () => Promise<string | null>, handled?: (error: unknown) => boolean): Promise<void>;
}

/** The state of one operator action ({@link Action}). */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<Said | null>(null);
  const run: Action["run"] = async (work, handled) => {
    setBusy(true);
    setSaid(null);
    try {
      const text = await work();
      if (text !== null) setSaid({ ok: true, text });
    } catch (error) {
      if (!handled?.(error)) setSaid({ ok: false, text: messageOf(error) });
    } finally {
      setBusy(false);
    }
  };
  return { busy, said, run };
}
