/**
 * Where the run page reads a run from: the live API (the dashboard), or the data embedded in an
 * explore file (`rewind explore`: no server, no network). The page's code is the same for both;
 * only this seam differs, so an explore file shows what the dashboard shows.
 */
import { EMBEDDED_ELEMENT_ID } from "../../src/explore-id.js";
import type { ExploreFile, JournalPage, Json, RunList, RunScript, RunView } from "./api.js";

export interface RunSource {
  run(runId: string): Promise<RunView>;
  runs(query: URLSearchParams): Promise<RunList>;
  journal(runId: string, after?: number, limit?: number): Promise<JournalPage>;
  script(runId: string): Promise<RunScript>;
  /** A value a journal page deferred (the live API); a file has its values inline, or none. */
  value?(runId: string, ref: string): Promise<Json>;
}

/** The explore file's data, if this page is one (read once, at start). */
export function embeddedData(): ExploreFile | undefined {
  const element = document.getElementById(EMBEDDED_ELEMENT_ID);
  if (element === null) return undefined;
  const data = JSON.parse(element.textContent ?? "") as ExploreFile;
  if (data.version !== 1)
    throw new Error(
      `This explore file's data is version ${String(data.version)}; this page reads version 1: make it again with this rewind`,
    );
  return data;
}

/** One run, as embedded: the journal whole, the script if it was read, no other runs. */
export class EmbeddedSource implements RunSource {
  constructor(readonly data: ExploreFile) {}

  run(runId: string): Promise<RunView> {
    return runId === this.data.run.id
      ? Promise.resolve(this.data.run)
      : Promise.reject(new Error(`This file holds run ${this.data.run.id} only, not ${runId}`));
  }

  runs(query: URLSearchParams): Promise<RunList> {
    // Forks of the run were made elsewhere, later: a file knows none.
    void query;
    return Promise.resolve({ runs: [] });
  }

  journal(runId: string, after = 0): Promise<JournalPage> {
    void runId;
    return Promise.resolve({
      entries: after === 0 ? this.data.entries : this.data.entries.filter((e) => e.seq > after),
      // As the file was made; the page stops following once it has the entries.
      status: this.data.run.status,
    });
  }

  script(runId: string): Promise<RunScript> {
    void runId;
    return this.data.script !== undefined
      ? Promise.resolve(this.data.script)
      : Promise.reject(new Error(this.data.scriptProblem ?? "This file holds no script"));
  }
}
