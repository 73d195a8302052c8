import { Script, createContext, type Context } from "node:vm";

/**
 * Operators' regexes, run where a hostile one cannot hang the process: in a context of their
 * own, under a time bound (V8 interrupts a backtracking regex when the bound passes). One call
 * per committed step runs every pattern over every string of it, so the bound's cost (a
 * watchdog per call, about 0.2 ms) is paid once a step, and only by namespaces with patterns.
 */
export const PATTERN_BUDGET_MS = 50;

/** The rule recorded when the patterns ran out of time: every string of the step is replaced. */
export const PATTERN_TIMEOUT_RULE = "pattern-timeout";

const RUN = new Script(
  `(function run(patterns, texts) {
     const hits = [];
     const out = [];
     for (let i = 0; i < texts.length; i++) {
       let text = texts[i];
       for (let p = 0; p < patterns.length; p++) {
         const pattern = patterns[p];
         pattern.re.lastIndex = 0;
         text = text.replace(pattern.re, function () { hits.push(pattern.name); return "[redacted:" + pattern.name + "]"; });
       }
       out.push(text);
     }
     return { out: out, hits: hits };
   })(patterns, texts)`,
);

export class BoundedPatterns {
  private readonly context: Context;

  constructor(patterns: readonly { name: string; regex: string; flags?: string }[]) {
    this.context = createContext({});
    // Compiled inside the context: a regex's execution belongs to the context that made it.
    this.context.sources = patterns.map((p) => ({ ...p }));
    this.context.patterns = new Script(
      "sources.map(function (s) { return { name: s.name, re: new RegExp(s.regex, (s.flags || '') + 'g') }; })",
    ).runInContext(this.context);
  }

  /**
   * Each text with every match replaced by its pattern's marker, and the names that hit; when
   * the bound passes, fail closed: every text is replaced whole (PATTERN_TIMEOUT_RULE).
   */
  apply(texts: readonly string[]): { out: string[]; hits: string[] } {
    this.context.texts = [...texts];
    try {
      const result = RUN.runInContext(this.context, { timeout: PATTERN_BUDGET_MS }) as {
        out: string[];
        hits: string[];
      };
      return { out: [...result.out], hits: [...result.hits] };
    } catch {
      const marker = `[redacted:${PATTERN_TIMEOUT_RULE}]`;
      return { out: texts.map(() => marker), hits: [PATTERN_TIMEOUT_RULE] };
    } finally {
      this.context.texts = undefined;
    }
  }
}
