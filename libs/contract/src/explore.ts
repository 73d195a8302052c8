import type { JournalEntry } from "@rewind/core";
import type { RunScript } from "./replay.js";
import type { RunView } from "./runs.js";

/**
 * What `rewind explore` embeds in its HTML file: one run as the dashboard's run page reads it
 * from the API (its view, its whole journal, its script with the source map), so the same page
 * code shows it with no server. Embedded as JSON in a `<script type="application/json">`
 * element, every `<` escaped, so no tenant text can end the element.
 */
export interface ExploreFile {
  /** The format of this object: a page refuses a version it does not know. */
  version: 1;
  /** When the file was made (ISO 8601) and from what: a run id, or a journal file's path. */
  madeAt: string;
  from: string;
  run: RunView;
  /** The whole journal, in seq order; a value larger than the bound is replaced (see omitted). */
  entries: JournalEntry[];
  /** The run's script, or undefined when none could be read (the page says why). */
  script?: RunScript;
  scriptProblem?: string;
  /**
   * Values left out to keep the file bounded, by `seq.field` (`12.result`): each the size in
   * characters of its JSON. The entry holds a short string in its place; the page says which.
   */
  omitted: Record<string, number>;
  /** The bound: a value whose JSON is longer is left out (characters). */
  valueLimit: number;
}
