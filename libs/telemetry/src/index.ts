export { metrics, TracedHistogram, type Metrics } from "./metrics.js";
export {
  DEFINITIONS,
  PROCESS_DEFINITIONS,
  ALL_DEFINITIONS,
  type MetricDefinition,
  type MetricType,
  type Service,
} from "./definitions.js";
export {
  renderMetrics,
  negotiateFormat,
  onScrape,
  serveAs,
  CONTENT_TYPES,
  type ExpositionFormat,
} from "./exposition.js";
export {
  adoptRunTrace,
  derivedTraceId,
  forgetRunTrace,
  parseTraceparent,
  traceIdOf,
} from "./trace-id.js";
export {
  createLogger,
  lineLog,
  runFields,
  prettyLine,
  type Logger,
  type LogFormat,
  type LoggerOptions,
  type RunFields,
} from "./logger.js";
export { startHealthServer, type ServiceStatus } from "./health-server.js";
export { hop, hopClock, hopsOn } from "./hops.js";
