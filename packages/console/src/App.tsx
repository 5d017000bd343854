/**
 * The console's shell: the token page until a token is accepted, then the pages under `/ui/`
 * (history-API routes, so a deep link survives a reload: the Orchestrator answers index.html
 * for any `/ui/*` path).
 */
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, Route, Router, Switch } from "wouter";
import { onAuthRefused } from "./api.js";
import { RunPage } from "./pages/RunPage.js";
import { RunsPage } from "./pages/RunsPage.js";
import { TokenPage } from "./pages/TokenPage.js";
import { TurnPage } from "./pages/TurnPage.js";
import { WorkflowsPage } from "./pages/WorkflowsPage.js";
import { unseg as param } from "./route-param.js";
import { forgetToken, readToken } from "./token.js";

export function App() {
  const [signedIn, setSignedIn] = useState(() => readToken() !== null);
  const [refused, setRefused] = useState(false);
  const client = useQueryClient();
  useEffect(
    () =>
      onAuthRefused(() => {
        forgetToken();
        client.clear();
        setRefused(true);
        setSignedIn(false);
      }),
    [client],
  );
  if (!signedIn)
    return (
      <TokenPage
        refused={refused}
        onSignedIn={() => {
          setRefused(false);
          setSignedIn(true);
        }}
      />
    );
  return (
    <Router base="/ui">
      <header className="top">
        <Link href="/">Runs</Link>
        <Link href="/workflows">Workflows</Link>
        <button
          type="button"
          className="sign-out"
          onClick={() => {
            forgetToken();
            client.clear();
            setSignedIn(false);
          }}
        >
          Sign out
        </button>
      </header>
      <Switch>
        <Route path="/">{() => <RunsPage />}</Route>
        <Route path="/runs/:runId">{(p) => <RunPage key={p.runId} runId={param(p.runId)} />}</Route>
        <Route path="/runs/:runId/turns/:turnId">
          {(p) => <TurnPage key={`${p.runId}/${p.turnId}`} runId={param(p.runId)} turnId={param(p.turnId)} />}
        </Route>
        <Route path="/workflows">{() => <WorkflowsPage />}</Route>
        <Route path="/workflows/:name">{(p) => <WorkflowsPage name={param(p.name)} />}</Route>
        <Route>
          <main>
            <p>No such page. </p>
            <Link href="/">Runs</Link>
          </main>
        </Route>
      </Switch>
    </Router>
  );
}
