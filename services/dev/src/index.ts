export { startDevPlatform, type DevPlatform, type DevPlatformOptions } from "./platform.js";
