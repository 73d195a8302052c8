export { registry, metrics } from "./metrics.js";
