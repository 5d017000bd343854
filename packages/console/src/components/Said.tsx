/** What an operator action said ({@link useAction}): a success line, or an alert. */
import type { Said as SaidT } from "../use-action.js";
import { Inline } from "./Text.js";

export function Said({ said }: { said: SaidT | null }) {
  if (!said) return null;
  return (
    <p className={said.ok ? "sent" : "error"} role={said.ok ? undefined : "alert"}>
      <Inline text={said.text} />
    </p>
  );
}
