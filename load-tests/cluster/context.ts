/** What every workload is handed: the running cluster, the report, the flags, the floors. */
import type { Report } from "../sandbox/stats.js";
import type { Flags } from "./flags.js";
import type { BullFloor, PgFloor } from "./floors.js";
import type { Platform } from "./platform.js";

export interface Bench {
  platform: Platform;
  report: Report;
  flags: Flags;
  floors: { pg1?: PgFloor; pg8?: PgFloor; bull?: BullFloor };
}
