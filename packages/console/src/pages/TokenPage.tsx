/** The token page: the instance token entered once, checked with one call, kept for the tab. */
import { RunPage } from "@jr2/wire";
import { useRef, useState } from "react";
import { ApiError, api } from "../api.js";
import { forgetToken, saveToken } from "../token.js";
import { tokenProblem } from "../token-check.js";

export function TokenPage({ refused, onSignedIn }: { refused: boolean; onSignedIn(): void }) {
  // Uncontrolled: React would copy a controlled value into the input's `value` attribute, where
  // the token would sit in the page's markup.
  const input = useRef<HTMLInputElement>(null);
  const [empty, setEmpty] = useState(true);
  const [problem, setProblem] = useState<string | null>(
    refused ? "The Orchestrator refused the token: enter the instance token (JR2_INSTANCE_TOKEN)." : null,
  );
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    const token = (input.current?.value ?? "").trim();
    const bad = tokenProblem(token);
    if (bad) {
      setProblem(bad);
      return;
    }
    setBusy(true);
    setProblem(null);
    saveToken(token);
    try {
      await api("/runs?limit=1", RunPage);
      if (input.current) input.current.value = "";
      onSignedIn();
    } catch (error) {
      forgetToken(); // unchecked: a reload must not sign in with it
      setProblem(
        error instanceof ApiError && error.status === 401
          ? "Wrong token: the Orchestrator refused it. Enter the instance token (JR2_INSTANCE_TOKEN)."
          : `Could not check the token: ${error instanceof Error ? error.message : String(error)}`,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="token-page">
      <h1>jr2 console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label htmlFor="token">Instance token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          ref={input}
          onChange={(e) => setEmpty(e.target.value.trim() === "")}
          required
        />
        <button type="submit" disabled={busy || empty}>
          Sign in
        </button>
      </form>
      {problem ? (
        <p className="error" role="alert">
          {problem}
        </p>
      ) : null}
      <p className="muted">
        Kept in this tab only (sessionStorage) and sent as <code>Authorization: Bearer</code>. Over plain HTTP
        it travels in clear: on a LAN, put the Orchestrator behind a TLS proxy.
      </p>
    </main>
  );
}
