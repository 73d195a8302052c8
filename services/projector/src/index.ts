export { startProjectorService, type ProjectorProcessOptions } from "./main.js";
export { Projector, type ProjectorOptions, type SinkProgress } from "./projector.js";
export { loadRunView } from "./run-views.js";
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
export { WebhookSink } from "./webhooks/sink.js";
export { Dispatcher, type DispatcherOptions } from "./webhooks/dispatcher.js";
export { sendDelivery, type SendResult } from "./webhooks/send.js";
export { signatureHeader, eventIdOf } from "./webhooks/signature.js";
export { eventsOf } from "./webhooks/events.js";
