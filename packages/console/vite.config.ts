import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/**
 * The console is served by the Orchestrator under `/ui/` with a strict CSP (ADR-0451): no
 * inline script or style, so the build emits only files (`modulePreload.polyfill` would be
 * inlined into the entry chunk, never into index.html; `assetsInlineLimit: 0` keeps fonts and
 * images as files rather than data: URLs the CSP would have to allow).
 */
export default defineConfig({
  base: "/ui/",
  plugins: [react()],
  // ajv (rjsf's default validator) needs 'unsafe-eval': never bundled, see src/stubs/no-ajv.ts.
  resolve: {
    alias: { "@rjsf/validator-ajv8": fileURLToPath(new URL("src/stubs/no-ajv.ts", import.meta.url)) },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    chunkSizeWarningLimit: 3000,
  },
});
