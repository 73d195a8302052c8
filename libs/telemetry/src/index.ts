export { registry, metrics } from "./metrics.js";
export { startHealthServer, type ServiceStatus } from "./health-server.js";
