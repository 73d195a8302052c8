export { DASHBOARD_PATH, mountDashboard } from "./mount.js";
