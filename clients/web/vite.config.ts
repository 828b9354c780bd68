import { defineConfig } from "vite";

// A deterministic build: no source maps, content-hashed file names, no build time or absolute
// paths in the output, so rebuilding from the same sources gives the committed dist/ byte for
// byte (scripts/check-web.sh checks it).
export default defineConfig({
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    target: "es2022",
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { port: 5173 },
});
