import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One file the dashboard serves, read once at start-up. */
export interface Asset {
  body: Buffer;
  contentType: string;
  /** A strong validator: the content's digest, so a rebuilt file is never answered 304. */
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
  ".map": "application/json; charset=utf-8",
};

/** The package's folder: this file is in src/ (sources) or dist/ (built), both one level down. */
const PACKAGE_DIR = fileURLToPath(new URL("../", import.meta.url));

/**
 * Where the files come from: the Vite build's folder, flat. Only these extensions, no
 * subfolders: a request can name nothing else, so there is no path to traverse.
 */
const SOURCES = [
  { dir: `${PACKAGE_DIR}dist/web/`, extensions: [".html", ".css", ".svg", ".js", ".map"] },
];

/**
 * The dashboard's files by name (`index.html`, `main.js`, …), or the reason it cannot be served
 * (the browser app has not been built).
 */
export function loadAssets(): { assets: Map<string, Asset> } | { missing: string } {
  const assets = new Map<string, Asset>();
  for (const { dir, extensions } of SOURCES) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const extension = extensionOf(entry.name);
      if (!entry.isFile() || !extensions.includes(extension)) continue;
      const body = readFileSync(`${dir}${entry.name}`);
      const digest = createHash("sha256").update(body).digest("base64url").slice(0, 22);
      assets.set(entry.name, { body, contentType: CONTENT_TYPES[extension]!, etag: `"${digest}"` });
    }
  }
  if (!assets.has("index.html") || !assets.has("main.js"))
    return {
      missing: `The dashboard's browser app is not built (no ${PACKAGE_DIR}dist/web/main.js): run \`npm run build\` in the repository (Vite bundles web/ there), then restart`,
    };
  return { assets };
}

/** `.js`, `.css`, …; `.map` for `main.js.map`. */
function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot);
}
