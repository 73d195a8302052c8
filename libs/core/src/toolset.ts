import { parseDuration, type Duration } from "./duration.js";
import { RewindError } from "./errors.js";

/** What a tool is told about the call it serves. */
export interface ToolContext {
  /**
   * The call's idempotency key: identical every time this call is executed again (after a crash,
   * on another worker), unique otherwise. Pass it to the external service as its idempotency key.
   */
  callId: string;
  runId: string;
  toolset: string;
  tool: string;
  /** 1 for the first attempt, 2 for the first retry … */
  attempt: number;
  /** Aborted when the tool's timeout passes. */
  signal: AbortSignal;
}

export type ToolFunction<A = any, R = any> = (args: A, ctx: ToolContext) => R | Promise<R>;

export interface ToolDefinition<A = any, R = any> {
  run: ToolFunction<A, R>;
  /** Never call this tool twice for one call: after a crash mid-call the run fails instead. */
  unsafeToRepeat?: boolean;
  /** How long one attempt may take ("30s"); the attempt then fails with TOOL_TIMEOUT. */
  timeout?: Duration;
  /** Further attempts after a failure, with exponential backoff (200 ms, 400 ms, 800 ms …). */
  retries?: number;
}

export interface Tool {
  name: string;
  run: ToolFunction;
  unsafeToRepeat: boolean;
  timeoutMs: number | undefined;
  retries: number;
}

/** The tools of a toolset as `defineToolset` receives them: a function, or one with options. */
export type ToolDefinitions = Record<string, ToolDefinition | ToolFunction>;

export interface Toolset<D extends ToolDefinitions = ToolDefinitions> {
  readonly kind: "rewind.toolset";
  readonly name: string;
  readonly tools: ReadonlyMap<string, Tool>;
  /**
   * Never set: it carries the definitions' types, from which a script's `tools` take theirs
   * (`ScriptTools<typeof toolset>` in `@rewind/sdk/script`).
   */
  readonly definitions?: D;
}

/** Declares the tools a run may call; a worker loads toolsets and a run names one. */
export function defineToolset<D extends ToolDefinitions>(name: string, tools: D): Toolset<D> {
  if (typeof name !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
    throw new RewindError(
      "INVALID_INPUT",
      `A toolset's name must be 1 to 64 letters, digits, "_", "." or "-", got ${JSON.stringify(name)}`,
    );
  }
  const map = new Map<string, Tool>();
  for (const [tool, definition] of Object.entries(tools)) {
    const def = typeof definition === "function" ? { run: definition } : definition;
    if (typeof def?.run !== "function") {
      throw new RewindError(
        "INVALID_INPUT",
        `Tool ${name}.${tool} needs a run(args, ctx) function`,
      );
    }
    const retries = def.retries ?? 0;
    if (!Number.isInteger(retries) || retries < 0 || retries > 100) {
      throw new RewindError(
        "INVALID_INPUT",
        `Tool ${name}.${tool}: retries must be an integer from 0 to 100, got ${retries}`,
      );
    }
    map.set(tool, {
      name: tool,
      run: def.run,
      unsafeToRepeat: def.unsafeToRepeat === true,
      timeoutMs:
        def.timeout === undefined
          ? undefined
          : parseDuration(def.timeout, `Tool ${name}.${tool}'s timeout`),
      retries,
    });
  }
  return { kind: "rewind.toolset", name, tools: map };
}

export function isToolset(value: unknown): value is Toolset {
  return (value as Toolset | null)?.kind === "rewind.toolset";
}

/** The toolset of a run that names none: no tools at all. */
export const EMPTY_TOOLSET: Toolset = defineToolset("none", {});
