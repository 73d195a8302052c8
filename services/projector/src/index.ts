export { startProjectorService, type ProjectorProcessOptions } from "./main.js";
export { Projector, loadRunView, type ProjectorOptions, type SinkProgress } from "./projector.js";
export { OtelSink } from "./otel-sink.js";
export { backfill } from "./backfill.js";
export type { Sink, SinkBatch } from "./sink.js";
export {
  spansOf,
  spanIdOf,
  traceIdOfRun,
  codeAttributes,
  type ModelSpan,
  type RunView,
} from "./span-model.js";
