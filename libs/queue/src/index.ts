export { InProcessQueue, type ActivationQueue } from "./activation-queue.js";
export { BullMqQueue, checkEvictionPolicy, type BullMqOptions } from "./bullmq-queue.js";
