import { OriginalError } from "./intrinsics.js";

/** The file name the user's bundle is compiled under; the host maps its positions to sources. */
export const SCRIPT_FILE = "rewind-script.js";

interface CallSite {
  getFileName(): string | null | undefined;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
}
type PrepareStackTrace = (error: Error, frames: CallSite[]) => unknown;
type ErrorWithV8 = typeof Error & {
  prepareStackTrace?: PrepareStackTrace;
  stackTraceLimit: number;
  captureStackTrace(target: object, constructorOpt?: unknown): void;
};

const V8Error = OriginalError as ErrorWithV8;
const captureStackTrace = V8Error.captureStackTrace;
const framesOnly: PrepareStackTrace = (_error, frames) => frames;

/**
 * `line:column` of the innermost frame in the user's script, in generated-code positions (the
 * host maps it through the source map), or "" when there is none. Callsites label journal entries
 * for people; they are never compared on replay, so a refactor keeps a journal compatible.
 */
export function userCallsite(): string {
  const savedPrepare = V8Error.prepareStackTrace;
  const savedLimit = V8Error.stackTraceLimit;
  try {
    V8Error.prepareStackTrace = framesOnly;
    V8Error.stackTraceLimit = 16;
    const holder: { stack?: CallSite[] } = {};
    captureStackTrace(holder, userCallsite);
    const frames = holder.stack;
    if (!frames) return "";
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]!;
      if (frame.getFileName() === SCRIPT_FILE) {
        return `${frame.getLineNumber() ?? 0}:${frame.getColumnNumber() ?? 0}`;
      }
    }
    return "";
  } catch {
    return ""; // a script that broke Error's stack machinery only loses its own labels
  } finally {
    V8Error.prepareStackTrace = savedPrepare;
    V8Error.stackTraceLimit = savedLimit;
  }
}
