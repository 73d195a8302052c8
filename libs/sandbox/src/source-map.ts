import { TraceMap, originalPositionFor } from "@jridgewell/trace-mapping";
import { SCRIPT_FILE } from "./guest/callsite.js";

/**
 * Maps positions in the compiled bundle back to the script's own files, so every callsite and
 * stack a person reads names the line they wrote. Positions repeat (a loop calls the same line),
 * so mapped results are cached.
 */
export class SourceMapper {
  private readonly map: TraceMap;
  private readonly cache = new Map<string, string>();

  constructor(sourceMapJson: string) {
    this.map = new TraceMap(sourceMapJson);
  }

  /** "line:column" in the bundle → "file.ts:line:column" in the source ("" stays ""). */
  callsite(generated: string): string {
    if (generated === "") return "";
    let mapped = this.cache.get(generated);
    if (mapped === undefined) {
      const [line, column] = generated.split(":").map(Number) as [number, number];
      mapped = this.position(line, column) ?? `${SCRIPT_FILE}:${generated}`;
      this.cache.set(generated, mapped);
    }
    return mapped;
  }

  /** Rewrites every bundle position in a stack trace and drops the runtime's own frames. */
  stack(stack: string): string {
    const lines = stack.split("\n").filter((line) => !line.includes("rewind-runtime.js"));
    return lines
      .map((line) =>
        line.replace(
          new RegExp(`${SCRIPT_FILE.replace(".", "\\.")}:(\\d+):(\\d+)`, "g"),
          (whole, l, c) => {
            return this.position(Number(l), Number(c)) ?? whole;
          },
        ),
      )
      .join("\n");
  }

  /** The source line at a mapped callsite, for reports that show code. */
  sourceLine(callsite: string): string | undefined {
    const match = /^(.*):(\d+):(\d+)$/.exec(callsite);
    if (match === null) return undefined;
    const index = this.map.sources.indexOf(match[1]!);
    const content = index >= 0 ? this.map.sourcesContent?.[index] : undefined;
    return content?.split("\n")[Number(match[2]) - 1];
  }

  private position(line: number, column: number): string | undefined {
    // V8 columns are 1-based; source maps' are 0-based.
    const original = originalPositionFor(this.map, { line, column: Math.max(0, column - 1) });
    if (original.source === null || original.line === null) return undefined;
    return `${original.source}:${original.line}:${(original.column ?? 0) + 1}`;
  }
}
