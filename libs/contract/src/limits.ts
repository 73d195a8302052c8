/** The namespace limits' requests and responses (GET and POST /v1/limits). */
import { LIMITS, LIMIT_NAMES, type LimitName } from "@rewind/core";
import { z } from "zod";

const limitValue = (name: LimitName) =>
  z
    .number()
    .int()
    .positive()
    .max(Number.MAX_SAFE_INTEGER)
    .nullable()
    .optional()
    .meta({ description: `At most this many ${LIMITS[name].what}; null: the default` });

export const SetLimitsBody = z.strictObject(
  Object.fromEntries(LIMIT_NAMES.map((name) => [name, limitValue(name)])) as Record<
    LimitName,
    ReturnType<typeof limitValue>
  >,
);

const numbers = z.strictObject(
  Object.fromEntries(LIMIT_NAMES.map((name) => [name, z.number()])) as Record<
    LimitName,
    z.ZodNumber
  >,
);

export const LimitsView = z.object({
  namespace: z.string(),
  limits: numbers.meta({
    description: "The limits in force: the namespace's own, else the default",
  }),
  own: z
    .object(
      Object.fromEntries(LIMIT_NAMES.map((name) => [name, z.number().nullable()])) as Record<
        LimitName,
        z.ZodNullable<z.ZodNumber>
      >,
    )
    .meta({ description: "What the namespace set (null: it takes the default)" }),
  defaults: numbers.meta({ description: "This API's defaults (REWIND_LIMIT_*)" }),
});

// ---- the TypeScript types of the wire
export type SetLimits = z.input<typeof SetLimitsBody>;
export type LimitsView = z.output<typeof LimitsView>;
