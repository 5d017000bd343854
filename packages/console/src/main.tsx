/**
 * The console's entry (issue 12): one QueryClient, the App. Loaded as a module file — the page
 * has no inline script (CSP `script-src 'self'`).
 */
import "./zod-jitless.js";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import { ApiError } from "./api.js";
import "./styles.css";

const client = new QueryClient({
  defaultOptions: {
    queries: {
      // A refused call (4xx) is an answer, not a blip: no retry.
      retry: (failures, error) =>
        !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failures < 3,
      staleTime: 1000,
    },
  },
});

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={client}>
        <App />
      </QueryClientProvider>
    </StrictMode>,
  );
