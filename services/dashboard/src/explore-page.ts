import { createHash } from "node:crypto";
import type { ExploreFile } from "@rewind/contract";
import { loadAssets } from "./assets.js";
import { EMBEDDED_ELEMENT_ID } from "./explore-id.js";

/**
 * One self-contained HTML file of a run's page (`rewind explore`): the dashboard's own script
 * and style inlined, the run's data embedded as JSON in an element no browser executes, and a
 * policy that lets the page run only that script and connect nowhere.
 *
 * The data is tenants' text: every `<` is written `\u003c` (JSON.parse reads it back), so no
 * `</script>` in a value can end the element and no markup in it is ever parsed. The policy is
 * the second wall: an inline script other than the page's (its SHA-256 is the only one allowed)
 * does not run, and `connect-src 'none'` / `default-src 'none'` stop every request, so nothing in
 * the file can send its data anywhere.
 */
export function exploreHtml(data: ExploreFile): string {
  const loaded = loadAssets();
  if ("missing" in loaded) throw new Error(loaded.missing);
  const text = (name: string) => {
    const asset = loaded.assets.get(name);
    if (asset === undefined) throw new Error(`The dashboard's build has no ${name}`);
    return asset.body.toString("utf8");
  };
  const script = inlineable(withoutSourceMap(text("main.js")), "script");
  const style = inlineable(withoutSourceMap(text("style.css")), "style");
  const json = JSON.stringify(data).replace(/</g, "\\u003c");
  const policy = [
    "default-src 'none'",
    `script-src '${sha256(script)}'`,
    `style-src '${sha256(style)}'`,
    "img-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const title = `Rewind: ${data.run.id}`.replace(/[<>&"]/g, "");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="Content-Security-Policy" content="${policy}" />
    <meta name="referrer" content="no-referrer" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <style>${style}</style>
    <script type="application/json" id="${EMBEDDED_ELEMENT_ID}">${json}</script>
    <script type="module">${script}</script>
  </head>
  <body>
    <div id="app"></div>
    <noscript>This page (a run made offline by rewind explore) needs JavaScript.</noscript>
  </body>
</html>
`;
}

function sha256(text: string): string {
  return `sha256-${createHash("sha256").update(text, "utf8").digest("base64")}`;
}

/** The build names its source map in a last-line comment: the file has none to point at. */
function withoutSourceMap(text: string): string {
  return text.replace(/\n?\/[/*]# sourceMappingURL=[^\n]*\s*$/, "\n");
}

/**
 * The bundle as the body of an inline element: `</script` (or `</style`) would end it early and
 * `<!--` would change how the rest parses. Vite's output holds neither today; should a string in
 * it ever hold `</script`, `<\/` means the same inside any JavaScript string, template or regex.
 */
function inlineable(code: string, element: "script" | "style"): string {
  const closing = new RegExp(`</(${element})`, "gi");
  if (element === "style") {
    if (closing.test(code) || code.includes("<!--"))
      throw new Error("The dashboard's style.css holds `</style` or `<!--`: it cannot be inlined");
    return code;
  }
  if (code.includes("<!--"))
    throw new Error("The dashboard's main.js holds `<!--`: it cannot be inlined");
  return code.replace(closing, "<\\/$1");
}
