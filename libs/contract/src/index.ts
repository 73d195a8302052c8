/**
 * The HTTP API's wire, in one place: the API validates with these schemas and renders its
 * OpenAPI document from them, and the SDK's types are inferred from them, so the three agree.
 */
export * from "./runs.js";
export * from "./quarantine.js";
export * from "./replay.js";
export * from "./epochs.js";
export * from "./tokens.js";
export * from "./limits.js";
export * from "./codec.js";
export * from "./webhooks.js";
export * from "./scripts.js";
export * from "./capture-policy.js";
export * from "./json-path.js";
export * from "./explore.js";
