import { runsListCases } from "./runs-list-cases.js";

runsListCases({ postgres: true });
