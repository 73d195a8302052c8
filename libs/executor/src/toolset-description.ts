import type { Toolset } from "@rewind/core";
import type { Store, ToolsetDescription } from "@rewind/store";

/** What the platform outside the workers may know of toolsets: names and options, no code. */
export function describeToolsets(toolsets: Iterable<Toolset>): ToolsetDescription[] {
  return [...toolsets].map((toolset) => ({
    name: toolset.name,
    tools: [...toolset.tools.values()].map((tool) => ({
      name: tool.name,
      unsafeToRepeat: tool.unsafeToRepeat,
      ...(tool.timeoutMs === undefined ? {} : { timeoutMs: tool.timeoutMs }),
      retries: tool.retries,
    })),
  }));
}

/**
 * Called by the Executor's owners (`rewind worker`, `rewind dev`) at start-up: the API never
 * loads toolsets, yet a fork's preview must name the calls a tool marked unsafeToRepeat would
 * refuse, so the workers publish what their toolsets are.
 */
export async function publishToolsets(
  store: Store,
  toolsets: Iterable<Toolset>,
  publisher: string,
): Promise<void> {
  await store.publishToolsets(describeToolsets(toolsets), publisher);
}
