import type { ErrorData, GuestCommand, GuestEvent, Json, RunStartedEntry } from "@rewind/core";
import type { ScriptDriver } from "@rewind/journal";

/** A command the script emitted, as a reader compares it with a journal entry (same field names). */
export type CommandView =
  | { kind: "call"; name: string; args: Json; callsite?: string }
  | { kind: "timer.set"; due: number; callsite?: string }
  | { kind: "timer.cancel"; callsite?: string }
  | { kind: "output"; stream: "stdout" | "stderr"; text: string; callsite?: string }
  | { kind: "run.completed"; result: Json }
  | { kind: "run.failed"; error: ErrorData };

/** The most commands kept after a divergence: enough to read what the script does instead. */
const KEPT = 20;

/**
 * A driver that passes everything through and remembers the commands the script emitted, in
 * order: a divergence report's labels are short forms, and a diff needs the whole arguments. The
 * engine (pinned by the epoch digest) is not touched: this sits between it and the sandbox.
 */
export class EmittedCommands implements ScriptDriver {
  private readonly commands: GuestCommand[] = [];

  constructor(private readonly driver: ScriptDriver) {}

  async start(input: RunStartedEntry["input"]): Promise<GuestCommand[]> {
    return this.keep(await this.driver.start(input));
  }

  async deliver(event: GuestEvent): Promise<GuestCommand[]> {
    return this.keep(await this.driver.deliver(event));
  }

  captureCallsites(on: boolean): void {
    this.driver.captureCallsites?.(on);
  }

  /** The commands from the `index`th emitted on (0-based), at most KEPT. */
  from(index: number): CommandView[] {
    return this.commands.slice(index, index + KEPT).map(viewOf);
  }

  private keep(commands: GuestCommand[]): GuestCommand[] {
    this.commands.push(...commands);
    return commands;
  }
}

function viewOf(command: GuestCommand): CommandView {
  const at = (callsite: string) => (callsite === "" ? {} : { callsite });
  switch (command.type) {
    case "call":
      return { kind: "call", name: command.name, args: command.args, ...at(command.callsite) };
    case "timer.set":
      return { kind: "timer.set", due: command.due, ...at(command.callsite) };
    case "timer.cancel":
      return { kind: "timer.cancel", ...at(command.callsite) };
    case "output":
      return {
        kind: "output",
        stream: command.stream,
        text: command.text,
        ...at(command.callsite),
      };
    case "complete":
      return { kind: "run.completed", result: command.result };
    case "fail":
      return { kind: "run.failed", error: command.error };
  }
}
