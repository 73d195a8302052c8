export { DASHBOARD_PATH, mountDashboard } from "./mount.js";
export { exploreHtml } from "./explore-page.js";
export {
  DEFAULT_VALUE_LIMIT,
  exploreData,
  runViewOfJournal,
  type ExploreInput,
} from "./explore-data.js";
