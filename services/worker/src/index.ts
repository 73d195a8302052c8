export { startWorker, type WorkerOptions } from "./main.js";
