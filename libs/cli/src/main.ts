#!/usr/bin/env node
import { Command } from "commander";
import { RewindError } from "@rewind/core";
import { execCommand } from "./commands/exec.js";

const program = new Command()
  .name("rewind")
  .description("Durable execution for TypeScript scripts")
  .showHelpAfterError();

program
  .command("exec")
  .description("run a script in-process in mock mode (virtual time, in-process tools, no server)")
  .argument("<script>", "the script (.ts or .js) whose default export runs")
  .option("--input <json>", "the run's input as JSON")
  .option("--tools <file>", "a module exporting a toolset made with defineToolset")
  .option("--seed <hex>", "the run's 256-bit seed as 64 hex digits (default: random)")
  .option("--journal <out>", "write the journal file (JSON Lines) as the run goes")
  .option("--resume <file>", "replay this (possibly truncated) journal file, then continue live")
  .option("--signal <spec...>", "deliver a signal: NAME[=JSON][@DELAY], DELAY in virtual time")
  .option("--start <iso>", "the virtual clock's start (default 2025-01-01T00:00:00Z)")
  .action(async (script: string, options) => {
    process.exitCode = await execCommand(script, options);
  });

program.parseAsync().catch((error: unknown) => {
  if (error instanceof RewindError) {
    process.stderr.write(`rewind: ${error.message}\n`);
    process.exitCode = 1;
    return;
  }
  process.stderr.write(
    `rewind: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
