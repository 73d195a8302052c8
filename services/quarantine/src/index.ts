export { startQuarantineService, type QuarantineServiceProcessOptions } from "./main.js";
export {
  QuarantineService,
  type QuarantineServiceOptions,
  type ReleaseDoorbell,
} from "./quarantine-service.js";
