import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { defineConfig, type Plugin } from "vite";

/** Every text file of the build also as `.gz` and `.br` (best compression; the server sends the
 * one the browser's Accept-Encoding allows, see service/server/src/web.rs). Both are
 * deterministic: the same input gives the same bytes. */
function precompress(): Plugin {
  return {
    name: "bete-precompress",
    apply: "build",
    writeBundle(options, bundle) {
      const dir = options.dir ?? "dist";
      for (const [name, out] of Object.entries(bundle)) {
        if (!/\.(js|css|html|svg|json)$/.test(name)) continue;
        const data = Buffer.from(out.type === "chunk" ? out.code : out.source);
        writeFileSync(join(dir, `${name}.gz`), gzipSync(data, { level: 9 }));
        writeFileSync(join(dir, `${name}.br`), brotliCompressSync(data, {
          params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
        }));
      }
    },
  };
}

// A deterministic build: no source maps, content-hashed file names, no build time or absolute
// paths in the output, so rebuilding from the same sources gives the committed dist/ byte for
// byte (scripts/check-web.sh checks it).
export default defineConfig({
  base: "/",
  plugins: [precompress()],
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    target: "es2022",
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // The precompression takes most of the build: not worth a warning.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
  server: { port: 5173 },
});
