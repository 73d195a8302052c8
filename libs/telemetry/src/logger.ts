import { pino, type Logger } from "pino";
import { traceIdOf } from "./trace-id.js";

export type { Logger } from "pino";
export type LogFormat = "json" | "pretty";

/** Fields a line about a run carries: its id, the seq it concerns, and its trace id. */
export interface RunFields {
  runId: string;
  seq?: number;
  traceId: string;
}

/** With the run's stored traceparent when the caller has it (else what this process adopted). */
export function runFields(runId: string, seq?: number, traceparent?: string): RunFields {
  return { runId, ...(seq === undefined ? {} : { seq }), traceId: traceIdOf(runId, traceparent) };
}

export interface LoggerOptions {
  /** json (one object a line, for a log pipeline) or pretty (for a terminal). */
  format?: LogFormat;
  /** Where lines go; stderr by default (stdout is a command's output). */
  destination?: NodeJS.WritableStream & { isTTY?: boolean };
  level?: string;
}

/**
 * A service's structured logger (pino): every line has the service's name, and a line about a
 * run has its runId, seq and traceId (runFields), so a log search and a trace meet. JSON unless
 * the destination is a terminal (then one short readable line each, as `rewind dev` shows), or
 * as REWIND_LOG_FORMAT says; REWIND_LOG_LEVEL sets the level (info).
 */
export function createLogger(service: string, options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  const format = options.format ?? logFormat(process.env.REWIND_LOG_FORMAT, destination.isTTY);
  const level = options.level ?? process.env.REWIND_LOG_LEVEL ?? "info";
  const base = { service };
  if (format === "json") return pino({ level, base }, destination);
  const color = destination.isTTY === true;
  return pino(
    { level, base },
    { write: (line: string) => destination.write(`${prettyLine(line, color)}\n`) },
  );
}

function logFormat(setting: string | undefined, tty: boolean | undefined): LogFormat {
  if (setting === "json" || setting === "pretty") return setting;
  return tty === true ? "pretty" : "json";
}

/**
 * The terminal form of the existing `log(line)` options: a line, and the fields it is about.
 * Lines with a runId in their fields are searchable by it in the JSON form.
 */
export function lineLog(logger: Logger): (line: string, fields?: object) => void {
  return (line, fields) => logger.info(fields ?? {}, line);
}

const LEVELS: Record<number, [string, string]> = {
  10: ["trace", "2"],
  20: ["debug", "2"],
  30: ["info", "36"],
  40: ["warn", "33"],
  50: ["error", "31"],
  60: ["fatal", "31"],
};
const SKIP = new Set(["level", "time", "pid", "hostname", "service", "msg"]);

/** `12:00:01.234 info  worker  message  runId=… seq=3`: what a person reads in a terminal. */
export function prettyLine(json: string, color: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.trimEnd();
  }
  const paint = (code: string, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  const [name, code] = LEVELS[record.level as number] ?? ["log", "0"];
  const time = new Date(record.time as number).toISOString().slice(11, 23);
  const fields = Object.entries(record)
    .filter(([key]) => !SKIP.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  return [
    paint("2", time),
    paint(code, name.padEnd(5)),
    paint("2", String(record.service)),
    typeof record.msg === "string" ? record.msg : JSON.stringify(record.msg ?? ""),
    ...(fields.length > 0 ? [paint("2", fields.join(" "))] : []),
  ].join(" ");
}
