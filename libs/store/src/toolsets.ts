/**
 * What the store keeps of toolsets (migrations/0002_toolsets.sql): their description as the
 * workers that run them publish it at start-up. The code stays in the workers; the API reads the
 * description to name, in a fork's preview, the calls a tool marked unsafeToRepeat would refuse.
 */
import { eq, sql as drizzleSql } from "drizzle-orm";
import { RewindError } from "@rewind/core";
import * as schema from "./schema.js";
import type { SqlClient } from "./sql.js";

/** One tool as its toolset defines it: its name and options, no code. */
export interface ToolDescription {
  name: string;
  unsafeToRepeat: boolean;
  /** The call's timeout, if it has one. */
  timeoutMs?: number;
  /** Times a failed call is tried again. */
  retries: number;
}

export interface ToolsetDescription {
  name: string;
  tools: ToolDescription[];
}

/** A description as the store holds it: who published it last, and when. */
export interface PublishedToolset extends ToolsetDescription {
  publishedBy: string;
  publishedAt: Date;
}

export async function publishToolsets(
  sql: SqlClient,
  described: readonly ToolsetDescription[],
  publisher: string,
): Promise<void> {
  for (const toolset of described) check(toolset);
  if (described.length === 0) return;
  // One statement: a worker's toolsets appear together; a concurrent publisher's rows replace
  // these or are replaced by them (the latest publication wins, see the migration).
  await sql.db
    .insert(schema.toolsets)
    .values(
      described.map((t) => ({ name: t.name, tools: t.tools.map(plain), publishedBy: publisher })),
    )
    .onConflictDoUpdate({
      target: schema.toolsets.name,
      set: {
        tools: drizzleSql`excluded.tools`,
        publishedBy: drizzleSql`excluded.published_by`,
        publishedAt: drizzleSql`now()`,
      },
    });
}

export async function getToolset(
  sql: SqlClient,
  name: string,
): Promise<PublishedToolset | undefined> {
  const rows = await sql.db.select().from(schema.toolsets).where(eq(schema.toolsets.name, name));
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    name: row.name,
    tools: (row.tools as ToolDescription[]).map(plain),
    publishedBy: row.publishedBy,
    publishedAt: row.publishedAt,
  };
}

/** Only the fields the table documents, in one order (what a reader of the row expects). */
function plain(tool: ToolDescription): ToolDescription {
  return {
    name: tool.name,
    unsafeToRepeat: tool.unsafeToRepeat,
    ...(tool.timeoutMs === undefined ? {} : { timeoutMs: tool.timeoutMs }),
    retries: tool.retries,
  };
}

function check(toolset: ToolsetDescription): void {
  const fail = (what: string) => {
    throw new RewindError(
      "INVALID_INPUT",
      `A toolset description ${what}: publish what describeToolsets() makes of defineToolset()'s toolsets`,
    );
  };
  if (typeof toolset.name !== "string" || toolset.name === "") fail("has no name");
  if (!Array.isArray(toolset.tools)) fail(`"${toolset.name}" has no tools list`);
  const names = new Set<string>();
  for (const tool of toolset.tools) {
    if (typeof tool.name !== "string" || tool.name === "")
      fail(`"${toolset.name}" has a tool with no name`);
    if (names.has(tool.name)) fail(`"${toolset.name}" names the tool "${tool.name}" twice`);
    names.add(tool.name);
    if (typeof tool.unsafeToRepeat !== "boolean")
      fail(`"${toolset.name}.${tool.name}" has no unsafeToRepeat flag`);
    if (!Number.isInteger(tool.retries) || tool.retries < 0)
      fail(`"${toolset.name}.${tool.name}" has retries ${String(tool.retries)}`);
    if (tool.timeoutMs !== undefined && !(Number.isFinite(tool.timeoutMs) && tool.timeoutMs > 0))
      fail(`"${toolset.name}.${tool.name}" has timeoutMs ${String(tool.timeoutMs)}`);
  }
}
