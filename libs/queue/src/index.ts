export {
  InProcessQueue,
  type Activation,
  type ActivationHandler,
  type ActivationQueue,
  type ConsumeOptions,
  type Delivery,
} from "./activation-queue.js";
export { BullMqQueue, checkEvictionPolicy, type BullMqOptions } from "./bullmq-queue.js";
export { RunNoticePublisher, RunNoticeSubscriber, type RunNoticeOptions } from "./run-notices.js";
