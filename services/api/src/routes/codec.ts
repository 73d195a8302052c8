import type { CodecSetting } from "@rewind/store";
import type { z } from "zod";
import { CodecView, SetCodecBody } from "@rewind/contract";
import { defineRoute } from "../route.js";

function view(namespace: string, setting: CodecSetting) {
  return {
    namespace,
    enabled: setting.enabled,
    algorithm: "aes-256-gcm",
    encryptingKeyId: setting.encryptingKeyId,
    keyIds: setting.keyIds,
    ...(setting.updatedAt !== undefined ? { updatedAt: setting.updatedAt.toISOString() } : {}),
  } satisfies z.input<typeof CodecView>;
}

export const getCodecRoute = defineRoute({
  method: "GET",
  path: "/v1/codec",
  operationId: "getCodec",
  summary: "The namespace's payload codec: whether its values are sealed, and this API's key ids",
  access: "read",
  responses: { 200: { description: "The payload codec setting", schema: CodecView } },
  errors: [401, 503],
  async handle({ namespace }, ctx) {
    return view(namespace, await ctx.store.getCodec(namespace));
  },
});

export const setCodecRoute = defineRoute({
  method: "POST",
  path: "/v1/codec",
  operationId: "setCodec",
  summary: "Switch the namespace's payload codec on or off (new values; stored ones stay readable)",
  description:
    "Every process sees the change within 5 s. Switching it on is refused (409) when this API process has no REWIND_CODEC_KEYS; every API, worker and quarantine process needs the same keys.",
  access: "operate",
  body: SetCodecBody,
  responses: { 200: { description: "The setting, after the change", schema: CodecView } },
  errors: [401, 409, 413, 422, 503],
  async handle({ body, namespace }, ctx) {
    return view(namespace, await ctx.store.setCodec(namespace, body.enabled));
  },
});
