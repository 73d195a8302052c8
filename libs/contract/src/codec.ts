/** The payload codec's request and response (GET and POST /v1/codec, docs/codec.md). */
import { z } from "zod";

export const SetCodecBody = z.strictObject({
  enabled: z.boolean().meta({
    description:
      "true: seal the namespace's new values with AES-256-GCM (REWIND_CODEC_KEYS); false: store new values in the clear. Values already stored stay as they are, readable either way",
  }),
});

export const CodecView = z.object({
  namespace: z.string(),
  enabled: z.boolean().meta({ description: "Whether the namespace's new values are sealed" }),
  algorithm: z.literal("aes-256-gcm"),
  encryptingKeyId: z
    .string()
    .nullable()
    .meta({
      description:
        "The key this API process seals with (the first of REWIND_CODEC_KEYS), or null when it has none",
    }),
  keyIds: z
    .array(z.string())
    .meta({
      description:
        "Every key id this API process can open values with; the keys themselves are never shown",
    }),
  updatedAt: z.string().optional().meta({ description: "When the setting last changed" }),
});

// ---- the TypeScript types of the wire
export type SetCodec = z.input<typeof SetCodecBody>;
export type CodecView = z.output<typeof CodecView>;
