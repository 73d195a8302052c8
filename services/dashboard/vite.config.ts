import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The browser app, bundled into dist/web/: one folder, no subfolders (src/assets.ts serves only
 * flat names), relative URLs (it lives under /dashboard/), no inline script (the CSP forbids it),
 * nothing fetched from anywhere but this origin.
 */
export default defineConfig({
  root: fileURLToPath(new URL("web/", import.meta.url)),
  base: "./",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: fileURLToPath(new URL("dist/web/", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "",
    // The preload polyfill would be an inline script; every browser the page targets has it.
    modulePreload: { polyfill: false },
    sourcemap: true,
    target: "es2022",
    chunkSizeWarningLimit: 600,
    // Stable names: the server answers every file `no-cache` with an ETag of its content.
    rollupOptions: {
      output: {
        entryFileNames: "main.js",
        chunkFileNames: "[name].js",
        assetFileNames: (asset) =>
          asset.names.some((name) => name.endsWith(".css")) ? "style.css" : "[name][extname]",
      },
    },
  },
});
