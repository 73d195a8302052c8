export {
  RunEngine,
  type ScriptDriver,
  type IncomingEvent,
  type EngineOptions,
  type Outcome,
} from "./engine.js";
export { DivergenceError, formatDivergence, type DivergenceReport } from "./divergence.js";
export { labelEntry, labelCommand, relative, type EntryLabel } from "./describe.js";
export { toJournalFile, parseJournalFile } from "./journal-file.js";
