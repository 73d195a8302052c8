export { execCommand, EXIT, type ExecOptions } from "./commands/exec.js";
export { loadToolsets } from "./load-toolset.js";
