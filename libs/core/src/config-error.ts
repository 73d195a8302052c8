import { RewindError } from "./errors.js";

/** A service's configuration is wrong: say which variable, what is wrong, and what to set. */
export function configError(service: string, problems: readonly string[]): RewindError {
  return new RewindError(
    "INVALID_INPUT",
    `${service} cannot start, its configuration is incomplete:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
  );
}
