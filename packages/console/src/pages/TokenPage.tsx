/** The token page: the instance token entered once, checked with one call, kept for the tab. */
import { RunPage } from "@jr2/wire";
import { useState } from "react";
import { ApiError, api } from "../api.js";
import { saveToken } from "../token.js";

export function TokenPage({ refused, onSignedIn }: { refused: boolean; onSignedIn(): void }) {
  const [token, setToken] = useState("");
  const [problem, setProblem] = useState<string | null>(
    refused ? "The Orchestrator refused the token: enter the instance token (JR2_INSTANCE_TOKEN)." : null,
  );
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setProblem(null);
    saveToken(token.trim());
    try {
      await api("/runs?limit=1", RunPage);
      onSignedIn();
    } catch (error) {
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
          value={token}
          onChange={(e) => setToken(e.target.value)}
          required
        />
        <button type="submit" disabled={busy || token.trim() === ""}>
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
