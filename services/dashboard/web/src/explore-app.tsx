import { useMemo } from "preact/hooks";
import type { ExploreFile } from "./api.js";
import { EmbeddedSource } from "./data-source.js";
import { localTime } from "./format.js";
import { RunPage } from "./run-page.js";
import { OmittedValues } from "./value-view.js";

/**
 * The page of an explore file (`rewind explore`): the dashboard's run page over the data the
 * file embeds. No token, no server, no request: the file's policy forbids every connection.
 */
export function ExploreApp({ data }: { data: ExploreFile }) {
  const source = useMemo(() => new EmbeddedSource(data), [data]);
  const left = Object.keys(data.omitted).length;
  return (
    <>
      <header>
        <h1>Rewind</h1>
        <span class="muted" id="explore-origin">
          Offline copy of {data.from}, made {localTime(data.madeAt)}
          {left > 0 &&
            ` (${left} ${left === 1 ? "value" : "values"} over ${data.valueLimit.toLocaleString()} characters left out)`}
        </span>
      </header>
      <main>
        <OmittedValues.Provider value={data.omitted}>
          <RunPage api={source} id={data.run.id} refused={() => {}} />
        </OmittedValues.Provider>
      </main>
    </>
  );
}
