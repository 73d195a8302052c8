import { startQuarantineService } from "@rewind/quarantine";
import { createLogger, lineLog } from "@rewind/telemetry";

/**
 * `rewind quarantine-service`: acts on operators' release and give-up requests for quarantined
 * runs (DATABASE_URL, REDIS_URL; REWIND_QUARANTINE_POLL_MS, REWIND_HEALTH_PORT). Stops on
 * SIGTERM or SIGINT.
 */
export async function quarantineServiceCommand(): Promise<number> {
  const log = lineLog(createLogger("quarantine"));
  const service = await startQuarantineService({ log });
  log(
    `quarantine service ready${service.healthUrl === undefined ? "" : ` (metrics on ${service.healthUrl}/metrics)`}`,
  );
  return new Promise((resolve) => {
    const stop = () => {
      log("stopping…");
      void service.close().then(() => resolve(0));
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
