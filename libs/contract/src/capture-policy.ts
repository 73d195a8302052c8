/** The capture policy's request and response (GET and PUT /v1/capture-policy, docs/capture-policy.md). */
import { z } from "zod";
import { parseJsonPath } from "./json-path.js";

/** The built-in detectors a policy may name: what each finds is in docs/capture-policy.md. */
export const CAPTURE_DETECTORS = [
  "card-number",
  "bearer-token",
  "api-key",
  "jwt",
  "email",
] as const;
export type CaptureDetector = (typeof CAPTURE_DETECTORS)[number];

/** At most this many fields / patterns in one policy, and this long a pattern's source. */
export const CAPTURE_LIMITS = { fields: 64, patterns: 32, regexLength: 512 } as const;

const ruleName = z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, {
  message: "must be lower-case letters, digits and -, starting with a letter (at most 64)",
});

const toolsetName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, { message: "must be a toolset name (letters, digits, _ . -)" });

const jsonPath = z.string().superRefine((path, ctx) => {
  const parsed = parseJsonPath(path);
  if ("error" in parsed)
    ctx.addIssue({
      code: "custom",
      message: `"${path.slice(0, 64)}" is not a JSON path: ${parsed.error}`,
    });
});

export const CapturePattern = z
  .strictObject({
    name: ruleName.meta({ description: "The rule's name: what the marker and the journal say" }),
    regex: z.string().min(1).max(CAPTURE_LIMITS.regexLength).meta({
      description: "A JavaScript regular expression; every match in a string is replaced",
    }),
    flags: z
      .string()
      // Linear checks: this field is a hostile client's text too.
      .refine((flags) => /^[imsu]{0,4}$/.test(flags) && new Set(flags).size === flags.length, {
        message: "may hold only i, m, s and u, each once",
      })
      .optional()
      .meta({ description: "Regex flags among i, m, s, u (g is implied)" }),
  })
  .superRefine((pattern, ctx) => {
    if ((CAPTURE_DETECTORS as readonly string[]).includes(pattern.name))
      ctx.addIssue({
        code: "custom",
        path: ["name"],
        message: `"${pattern.name}" is a built-in detector's name: list it in detectors, or name your pattern otherwise`,
      });
    try {
      new RegExp(pattern.regex, `${pattern.flags ?? ""}g`);
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        path: ["regex"],
        message: `is not a valid regular expression: ${(error as Error).message}`,
      });
    }
  });

export const PutCapturePolicyBody = z
  .strictObject({
    toolset: toolsetName
      .optional()
      .meta({ description: "The toolset this policy is for; absent: every run of the namespace" }),
    fields: z.array(jsonPath).max(CAPTURE_LIMITS.fields).default([]).meta({
      description:
        'JSON paths into every captured value (tool arguments and results, signals, inputs, run results), e.g. "$.card.number", "$.headers.authorization", "$..password": the value there is replaced by {"$redacted": "<path>"}',
    }),
    detectors: z.array(z.enum(CAPTURE_DETECTORS)).default([]).meta({
      description:
        'Built-in detectors run over every string (and console output, error messages): a match is replaced by "[redacted:<detector>]"',
    }),
    patterns: z.array(CapturePattern).max(CAPTURE_LIMITS.patterns).default([]).meta({
      description:
        'Your own patterns, run like the detectors under a time bound: a match is replaced by "[redacted:<name>]"',
    }),
  })
  .superRefine((body, ctx) => {
    const names = new Set<string>();
    body.patterns.forEach((pattern, i) => {
      if (names.has(pattern.name))
        ctx.addIssue({
          code: "custom",
          path: ["patterns", i, "name"],
          message: `"${pattern.name}" names two patterns: each needs its own name`,
        });
      names.add(pattern.name);
    });
  });

export const CapturePolicyQuery = z.strictObject({
  toolset: toolsetName.optional().meta({
    description: "The toolset's own policy; absent: the namespace-wide one",
  }),
});

export const CapturePolicyView = z.object({
  namespace: z.string(),
  toolset: z.string().nullable().meta({ description: "The toolset, or null for every run" }),
  fields: z.array(z.string()),
  detectors: z.array(z.enum(CAPTURE_DETECTORS)),
  patterns: z.array(
    z.object({ name: z.string(), regex: z.string(), flags: z.string().optional() }),
  ),
  updatedAt: z.string().optional().meta({ description: "When the policy last changed" }),
});

// ---- the TypeScript types of the wire
export type PutCapturePolicy = z.input<typeof PutCapturePolicyBody>;
export type CapturePolicyRules = z.output<typeof PutCapturePolicyBody>;
export type CapturePolicyView = z.output<typeof CapturePolicyView>;
