#!/usr/bin/env node
import { Command, Option } from "commander";
import { RewindError } from "@rewind/core";
import { RewindApiError } from "@rewind/sdk";
import { portTaken } from "./port.js";
import { cliVersion } from "./version.js";
/**
 * Each command's code is loaded when it runs: `rewind run` does not pay for the platform's
 * modules (the database, the HTTP server), and the action sets the exit code it returns.
 */
const lazy =
  <M>(load: () => Promise<M>, name: keyof M) =>
  async (...args: unknown[]) => {
    const module = await load();
    process.exitCode = await (module[name] as (...a: unknown[]) => Promise<number>)(...args);
  };
const runs$ = () => import("./commands/runs.js");

// A reader that stops early (`rewind runs list | head`) closes the pipe: that is the end of the
// output, not an error to print a stack for. A shell's pipe says EPIPE; a socket pair (how a
// Node parent, a test among them, spawns the CLI) says ECONNRESET when its reader is gone.
const READER_GONE = new Set(["EPIPE", "ECONNRESET"]);
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (!READER_GONE.has(error.code ?? "")) throw error;
  process.exit(process.exitCode ?? 0);
});

/**
 * Folds an alias into the option the command reads: the contract's flags keep their names
 * (`exec --tools FILE`, `dev --toolset FILE…`), and the other spelling works too.
 */
const withAlias =
  (alias: string, option: string, action: (...args: unknown[]) => Promise<void>) =>
  (...args: unknown[]) => {
    const options = args[args.length - 2] as Record<string, unknown>;
    const extra = options[alias];
    if (extra !== undefined) {
      const main = options[option];
      if (Array.isArray(extra))
        options[option] = [...((main as unknown[] | undefined) ?? []), ...extra];
      else if (main !== undefined)
        throw new RewindError(
          "INVALID_INPUT",
          `--${option} and --${alias} name the same thing: give one`,
        );
      else options[option] = extra;
      delete options[alias];
    }
    return action(...args);
  };
const SERVER_ENV = "(host: REWIND_HOST, default 127.0.0.1)";

const program = new Command()
  .name("rewind")
  .description("Durable execution for TypeScript scripts")
  .version(cliVersion(), "-v, --version", "print the version of rewind")
  .addHelpText(
    "after",
    `
Commands that talk to a server (run, runs, signal, cancel, replay, fork, cassette, explore,
quarantine, epochs, mcp) use REWIND_URL (default http://localhost:7420) and REWIND_TOKEN (default:
the token rewind dev saved in .rewind/token).`,
  )
  .showHelpAfterError();

program
  .command("init")
  .description(
    "scaffold a project: a script, a toolset, typed tsconfigs, a test against mock tools, npm scripts",
  )
  .argument("[dir]", "the folder to create it in", ".")
  .action(lazy(() => import("./commands/init.js"), "initCommand"));

program
  .command("exec")
  .description("run a script in-process in mock mode (virtual time, in-process tools, no server)")
  .argument("<script>", "the script (.ts or .js) whose default export runs")
  .option("--input <json>", "the run's input as JSON")
  .option(
    "--tools <file>",
    "a module exporting a toolset made with defineToolset (alias --toolset)",
  )
  .addOption(new Option("--toolset <file>").hideHelp())
  .option("--seed <hex>", "the run's 256-bit seed as 64 hex digits (default: random)")
  .option("--journal <out>", "write the journal file (JSON Lines) as the run goes")
  .option("--resume <file>", "replay this (possibly truncated) journal file, then continue live")
  .option("--signal <spec...>", "deliver a signal: NAME[=JSON][@DELAY], DELAY in virtual time")
  .option("--start <iso>", "the virtual clock's start (default 2025-01-01T00:00:00Z)")
  .option(
    "--fork <file>",
    "fork this journal file: reuse its recorded calls while the script makes the same ones",
  )
  .option("--at <seq>", "with --fork: run live from this seq of the parent at the latest")
  .action(
    withAlias(
      "toolset",
      "tools",
      lazy(() => import("./commands/exec.js"), "execCommand"),
    ),
  );

program
  .command("dev")
  .description(
    "the whole platform in one process: API, execution and timers (embedded database unless DATABASE_URL)",
  )
  .option("--port <port>", `the API's port, 0 for any free one ${SERVER_ENV}`, "7420")
  .option(
    "--toolset <file...>",
    "a module (.ts or .js) exporting toolsets made with defineToolset (repeatable; alias --tools)",
  )
  .addOption(new Option("--tools <file...>").hideHelp())
  .action(
    withAlias(
      "tools",
      "toolset",
      lazy(() => import("./commands/dev.js"), "devCommand"),
    ),
  );

program
  .command("run")
  .description(
    "submit a run to the platform and print its id; --wait streams its output and result",
  )
  .argument("<script>", "the script (.ts or .js)")
  .option("--input <json>", "the run's input as JSON (or @file.json)")
  .option(
    "--toolset <name>",
    "the name of the toolset the run may call (one a worker or rewind dev loaded)",
    "default",
  )
  .option("--wait", "stream the run's output and print its result")
  .action(lazy(runs$, "runCommand"));

const runs = program.command("runs").description("list and inspect runs");
runs
  .command("list")
  .option("--status <status>", "only runs with this status (several: comma-separated)")
  .option("--script <name>", "only runs of this script (file name or hash)")
  .option("--toolset <name>", "only runs with this toolset")
  .option("--epoch <n>", "only runs of this epoch")
  .option("--search <text>", "only runs whose id or error holds this text")
  .option("--limit <n>", "how many", "50")
  .option("--json", "print JSON")
  .action(lazy(runs$, "listCommand"));
runs
  .command("show")
  .argument("<run>", "the run's id")
  .option("--json", "print the run and its journal as one JSON object")
  .action(lazy(runs$, "showCommand"));

program
  .command("signal")
  .description("send a signal to a run")
  .argument("<run>")
  .argument("<name>")
  .argument("[json]", "the payload")
  .action(lazy(runs$, "signalCommand"));
program
  .command("cancel")
  .description("cancel a run")
  .argument("<run>")
  .action(lazy(runs$, "cancelCommand"));
program
  .command("replay")
  .description(
    "re-execute a run (or a journal file) locally against its journal; exit 0 if it matches",
  )
  .argument("[run|journal-file]", "a run's id, or a journal file written by rewind exec --journal")
  .option(
    "--script <file>",
    "the script to check (default: the run's own; required for a file or --all)",
  )
  .option("--all", "check the script against every open run (exit 0 only if all are compatible)")
  .option("--status <status>", "with --all: only runs with this status")
  .action(lazy(() => import("./commands/replay.js"), "replayCommand"));

program
  .command("fork")
  .description(
    "fork a run with a corrected script: recorded calls are reused while the calls match",
  )
  .argument("<run>")
  .requiredOption("--script <file>", "the corrected script")
  .option("--at <seq>", "run live from this seq of the parent at the latest")
  .option("--dry-run", "only show what the fork would reuse, run again and run live")
  .action(lazy(() => import("./commands/fork.js"), "forkCommand"));

program
  .command("mcp")
  .description(
    "agent tools (list_runs, get_run, replay_run, retry_run) over the Model Context Protocol on stdio",
  )
  .action(lazy(() => import("./commands/mcp.js"), "mcpCommand"));

const cassette$ = () => import("./commands/cassette.js");
program
  .command("cassette")
  .description("export a run's journal file, to test scripts against in virtual time")
  .argument("<run>")
  .option("-o, --output <file>", "write it to a file instead of standard output")
  .action(lazy(cassette$, "cassetteCommand"));
program
  .command("explore")
  .description(
    "write a run's page (header, script with its journal by line, timeline) as one HTML file that needs no server and makes no request",
  )
  .argument("<run|journal-file>", "a run's id, or a journal file (then pass --script)")
  .option("--script <file>", "the script the run ran (required for a journal file)")
  .option("-o, --output <file>", "where to write the page (default: rewind-<run>.html)")
  .option(
    "--value-limit <chars>",
    "leave out values whose JSON is longer (default 65536; the page says where)",
  )
  .action(lazy(() => import("./commands/explore.js"), "exploreCommand"));
program
  .command("test")
  .description("run a script against a cassette: each tool call answered as the real run's was")
  .argument("<script>")
  .requiredOption(
    "--cassette <file>",
    "a journal file from rewind cassette or rewind exec --journal",
  )
  .action(lazy(cassette$, "testCommand"));

const services$ = () => import("./commands/services.js");
program
  .command("api")
  .description(
    "the HTTP API as its own process (DATABASE_URL, REDIS_URL); workers execute the runs. New runs " +
      "start in the newest epoch this Node serves, or in REWIND_NEW_RUN_EPOCH (an older released one)",
  )
  .option("--port <port>", `the port, 0 for any free one ${SERVER_ENV}`, "7420")
  .action(lazy(services$, "apiCommand"));
program
  .command("worker")
  .description(
    "a stateless worker: executes runs from Redis activations against the shared journal",
  )
  .option(
    "--toolset <file...>",
    "a module (.ts or .js) exporting toolsets made with defineToolset (repeatable; alias --tools)",
  )
  .addOption(new Option("--tools <file...>").hideHelp())
  .option("--concurrency <n>", "activations at once", "64")
  .action(withAlias("tools", "toolset", lazy(services$, "workerCommand")));
const token$ = () => import("./commands/token.js");
const token = program
  .command("token")
  .description(
    "API tokens, on the database (DATABASE_URL or .rewind/), or through a running rewind dev",
  );
token
  .command("create")
  .description("make a token and print it once (its id goes to stderr)")
  .option("--namespace <name>", "the namespace it grants", "default")
  .option("--label <label>", "a note to know it by", "cli")
  .option(
    "--scope <scopes>",
    "what it may do, comma-separated: read, run, operate, metrics (default read,run,operate)",
  )
  .action(lazy(token$, "createCommand"));
token
  .command("list")
  .description("tokens with their ids, labels and scopes (never the tokens themselves)")
  .option("--namespace <name>", "only this namespace's")
  .option("--json", "print JSON")
  .action(lazy(token$, "listCommand"));
token
  .command("revoke")
  .description("revoke a token by its id (tok_…, from rewind token list)")
  .argument("<id>")
  .action(lazy(token$, "revokeCommand"));

const limits$ = () => import("./commands/limits.js");
const limits = program
  .command("limits")
  .description("the namespace's limits (runs in flight, starts/s, journal, output, timers)")
  .option("--json", "print JSON")
  .action(lazy(limits$, "showCommand"));
limits
  .command("set")
  .description("set limits of the namespace: name=value… (value default: back to the default)")
  .argument("<assignments...>")
  .action(lazy(limits$, "setCommand"));

const codec$ = () => import("./commands/codec.js");
const codec = program
  .command("codec")
  .description(
    "the namespace's payload codec: values sealed at rest with AES-256-GCM (docs/codec.md)",
  )
  .option("--json", "print JSON")
  .action(lazy(codec$, "showCommand"));
codec
  .command("show")
  .description("whether the codec is on, and the key ids the API holds")
  .option("--json", "print JSON")
  // `--json` after `show` is the parent's option too (commander reads it there): take either.
  .action((options: { json?: boolean }, command: { parent?: { opts(): { json?: boolean } } }) =>
    lazy(
      codec$,
      "showCommand",
    )({ json: options.json === true || command.parent?.opts().json === true }),
  );
codec
  .command("set")
  .description(
    "on: seal the namespace's new values (every process needs REWIND_CODEC_KEYS); off: store new ones in the clear",
  )
  .argument("<on|off>")
  .action(lazy(codec$, "setCommand"));

const capture$ = () => import("./commands/capture.js");
const repeat = (value: string, previous: string[] = []) => [...previous, value];
const capture = program
  .command("capture")
  .description(
    "the namespace's capture policy: fields and patterns redacted before the journal (docs/capture-policy.md)",
  )
  .option("--toolset <name>", "the toolset's own policy (default: the namespace-wide one)")
  .option("--json", "print JSON")
  .action(lazy(capture$, "showCommand"));
capture
  .command("show")
  .description("the policy: its fields, detectors and patterns")
  .option("--toolset <name>", "the toolset's own policy (default: the namespace-wide one)")
  .option("--json", "print JSON")
  // Options after `show` may be read by the parent (commander): take either.
  .action(
    (
      options: { toolset?: string; json?: boolean },
      command: { parent?: { opts(): { toolset?: string; json?: boolean } } },
    ) => lazy(capture$, "showCommand")({ ...command.parent?.opts(), ...options }),
  );
capture
  .command("set")
  .description("replace the policy (new entries only; none of the options: empty it)")
  .option("--toolset <name>", "the toolset's own policy (default: the namespace-wide one)")
  .option("--field <path>", "a JSON path to replace, e.g. $.card.number (repeatable)", repeat)
  .option(
    "--detector <name>",
    "card-number, bearer-token, api-key, jwt or email (repeatable)",
    repeat,
  )
  .option(
    "--pattern <name=regex>",
    "your own pattern, e.g. ssn=\\d{3}-\\d{2}-\\d{4} (repeatable)",
    repeat,
  )
  .option("--json", "print JSON")
  .action(
    (
      options: {
        toolset?: string;
        field?: string[];
        detector?: string[];
        pattern?: string[];
        json?: boolean;
      },
      command: { parent?: { opts(): { toolset?: string; json?: boolean } } },
    ) => lazy(capture$, "setCommand")({ ...command.parent?.opts(), ...options }),
  );

program
  .command("quarantine-service")
  .description(
    "acts on operators' release and give-up requests for quarantined runs (DATABASE_URL, REDIS_URL)",
  )
  .action(lazy(() => import("./commands/quarantine-service.js"), "quarantineServiceCommand"));

const projector$ = () => import("./commands/projector.js");
program
  .command("projector")
  .description(
    "follows committed journal entries into each sink: traces over OTLP (DATABASE_URL, OTEL_*), webhooks (REWIND_WEBHOOK_*); sends webhooks",
  )
  .action(lazy(projector$, "projectorCommand"));
const projections = program
  .command("projections")
  .description("each projection sink's cursor and lag")
  .option("--json", "print JSON")
  .action(lazy(projector$, "projectionsCommand"));
projections
  .command("backfill")
  .description("re-run a sink over runs (same span ids and contents as the first time)")
  .requiredOption("--sink <name>", "the sink (otel, webhooks)")
  .option("--run <run...>", "these runs")
  .option("--since <duration>", "runs with entries committed this recently (7d, 12h)")
  .action(lazy(projector$, "backfillCommand"));

const webhooks$ = () => import("./commands/webhooks.js");
const webhooks = program
  .command("webhooks")
  .description(
    "the namespace's webhook endpoints (Standard Webhooks): add, list, remove, rotate, deliveries, redeliver",
  );
webhooks
  .command("add")
  .description("subscribe an endpoint; prints its id and signing secret (whsec_…)")
  .argument("<url>", "http(s) URL; private and loopback addresses need REWIND_WEBHOOK_ALLOW")
  .option(
    "--events <types>",
    "comma-separated: run.started, run.completed, run.failed, run.cancelled, run.quarantined, run.released (default: all)",
  )
  .option("--description <text>", "a note to know it by")
  .option("--disabled", "create it disabled")
  .option("--json", "print JSON")
  .action(lazy(webhooks$, "addCommand"));
webhooks
  .command("list")
  .description("the endpoints, enabled or not, and since when one fails")
  .option("--json", "print JSON")
  .action(lazy(webhooks$, "listCommand"));
webhooks
  .command("remove")
  .description("remove an endpoint and its delivery log")
  .argument("<id>", "wh_…, from rewind webhooks list")
  .action(lazy(webhooks$, "removeCommand"));
webhooks
  .command("rotate")
  .description("a new secret; the old one keeps signing for a while (two v1 signatures)")
  .argument("<id>")
  .option("--keep-previous <duration>", "how long the old secret signs too (default 24h, 0s: not)")
  .option("--json", "print JSON")
  .action(lazy(webhooks$, "rotateCommand"));
webhooks
  .command("enable")
  .description("enable an endpoint (forgets its failures); pending deliveries go out")
  .argument("<id>")
  .action(lazy(webhooks$, "enableCommand"));
webhooks
  .command("disable")
  .description("disable an endpoint: nothing is sent to it")
  .argument("<id>")
  .action(lazy(webhooks$, "disableCommand"));
webhooks
  .command("deliveries")
  .description("an endpoint's delivery log, newest first; --delivery D shows one with its attempts")
  .argument("<id>")
  .option("--status <status>", "pending, delivered or failed")
  .option("--limit <n>", "how many (default 50)")
  .option("--before <delivery>", "older than this delivery (the next page)")
  .option("--delivery <delivery>", "one delivery: its payload and every attempt")
  .option("--json", "print JSON")
  .action(lazy(webhooks$, "deliveriesCommand"));
webhooks
  .command("redeliver")
  .description("send a delivery again (same webhook-id and payload), with a new retry schedule")
  .argument("<id>")
  .argument("<delivery>", "the delivery's number, from rewind webhooks deliveries")
  .action(lazy(webhooks$, "redeliverCommand"));

const quarantine$ = () => import("./commands/quarantine.js");
const quarantine = program
  .command("quarantine")
  .description("runs held because their replay diverged: list, show, release, give up");
quarantine
  .command("list")
  .description("the quarantined runs, each with where its replay left its journal")
  .option("--limit <n>", "how many", "50")
  .option("--json", "print JSON")
  .action(lazy(quarantine$, "listCommand"));
quarantine
  .command("show")
  .description("a run's whole divergence report and its quarantine history")
  .argument("<run>")
  .option("--json", "print JSON")
  .action(lazy(quarantine$, "showCommand"));
quarantine
  .command("release")
  .description("replay the run again (after a fix), on its own epoch or the one given")
  .argument("<run>")
  .option("--epoch <n>", "the epoch to replay it on (default: its own)")
  .action(lazy(quarantine$, "releaseCommand"));
quarantine
  .command("give-up")
  .description("fail the run for good (code GIVEN_UP), recording who and why")
  .argument("<run>")
  .option("--reason <text>", "why, recorded in the run's failure")
  .action(lazy(quarantine$, "giveUpCommand"));

const epochs$ = () => import("./commands/epochs.js");
const epochs = program
  .command("epochs")
  .description("the determinism epochs the server supports, with the live runs and workers on each")
  .option("--json", "print JSON")
  .action(lazy(epochs$, "epochsCommand"));
epochs
  .command("migrate")
  .description(
    "replay the open runs of epoch <from> on a worker of epoch --to, and move those that match",
  )
  .argument("<from>", "the epoch whose open runs are checked")
  .requiredOption("--to <epoch>", "the epoch to move them to (a worker of it must be live)")
  .option("--dry-run", "only check: say which runs would move, move none")
  .option("--allow-draft", "allow a draft (unreleased) --to epoch, to try a runtime out")
  .option("--wait <duration>", "how long to wait for the check's verdicts (30s, 10m)", "10m")
  .option("--json", "print the check as JSON")
  .action(lazy(() => import("./commands/epochs-migrate.js"), "migrateEpochCommand"));

program
  .command("migrate")
  .description("apply the database migrations (DATABASE_URL, or .rewind/)")
  .option("--check", "apply nothing: exit 0 if the schema is this build's, 1 otherwise")
  .option("--wait <duration>", "with --check: keep checking this long (90s, 10m) before exit 1")
  .action(lazy(() => import("./commands/migrate.js"), "migrateCommand"));

// Every command that talks to a server says where it goes, in its own help.
const CLIENT_COMMANDS = new Set([
  "run",
  "runs",
  "signal",
  "cancel",
  "replay",
  "fork",
  "cassette",
  "quarantine",
  "epochs",
  "mcp",
  "limits",
  "codec",
  "capture",
]);
const clientHelp =
  "\nTalks to REWIND_URL (default http://localhost:7420) with REWIND_TOKEN (default: the token rewind dev saved in .rewind/token).";
for (const command of program.commands) {
  if (!CLIENT_COMMANDS.has(command.name())) continue;
  command.addHelpText("after", clientHelp);
  for (const sub of command.commands) sub.addHelpText("after", clientHelp);
}

program.parseAsync().catch((error: unknown) => {
  if (error instanceof RewindApiError) {
    // The API's messages speak HTTP; at the terminal the command is the way to list runs.
    const message = error.message.replace(
      "GET /v1/runs lists your runs",
      "rewind runs list lists them",
    );
    process.stderr.write(
      `rewind: ${message}${error.code === "UNAVAILABLE" ? "" : ` (${error.code})`}\n`,
    );
    process.exitCode = 1;
    return;
  }
  if (error instanceof RewindError) {
    process.stderr.write(`rewind: ${error.message}\n`);
    process.exitCode = 1;
    return;
  }
  // Taken between the check and the listen: the start-up's open handles would keep the process
  // alive, so it exits here.
  const failure = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (failure?.code === "EADDRINUSE" && failure.port !== undefined) {
    process.stderr.write(
      `rewind: ${portTaken(failure.address ?? "127.0.0.1", failure.port).message}\n`,
    );
    process.exit(1);
  }
  process.stderr.write(
    `rewind: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
