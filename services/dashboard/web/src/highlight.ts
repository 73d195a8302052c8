/**
 * TypeScript highlighted by highlight.js (bundled: no CDN), as one HTML string per line so the
 * source view can give each line its gutter. highlight.js escapes the text it is given (`<`, `&`,
 * quotes), so its output holds only its own <span class="hljs-…"> tags around escaped text.
 */
import hljs from "highlight.js/lib/core";
import typescript from "highlight.js/lib/languages/typescript";

hljs.registerLanguage("typescript", typescript);

/** Past this, a script is shown plain: highlighting it would hold the page up. */
const MAX_HIGHLIGHTED = 400_000;

export function highlightLines(source: string): string[] {
  if (source.length > MAX_HIGHLIGHTED) return source.split("\n").map(escapeHtml);
  const html = hljs.highlight(source, { language: "typescript", ignoreIllegals: true }).value;
  return splitLines(html);
}

/** Splits highlighted HTML at newlines, closing the spans open at each end and reopening them. */
function splitLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let line = "";
  for (const token of html.split(/(<span[^>]*>|<\/span>|\n)/)) {
    if (token === "\n") {
      lines.push(line + "</span>".repeat(open.length));
      line = open.join("");
    } else {
      if (token.startsWith("<span")) open.push(token);
      else if (token === "</span>") open.pop();
      line += token;
    }
  }
  lines.push(line);
  return lines;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
