import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { Api } from "./api.js";
import { embeddedData } from "./data-source.js";
import { ExploreApp } from "./explore-app.js";
import { OverviewPage } from "./overview-page.js";
import { parseRoute, runsHref } from "./route.js";
import { RunPage } from "./run-page.js";
import { RunsPage } from "./runs-page.js";
import { forgetToken, keepToken, takeToken } from "./token.js";
import "./style.css";

function App() {
  const [token, setToken] = useState(takeToken);
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  const [problem, setProblem] = useState<string>();
  useEffect(() => {
    // A `#token=` link opened in this tab: the token is taken (and leaves the address) at once.
    const moved = () => {
      if (/[#&]token=/.test(location.hash)) {
        const taken = takeToken();
        if (taken !== undefined) {
          setToken(taken);
          setProblem(undefined);
        }
      }
      setRoute(parseRoute(location.hash));
    };
    window.addEventListener("hashchange", moved);
    return () => window.removeEventListener("hashchange", moved);
  }, []);
  const api = useMemo(() => (token === undefined ? undefined : new Api(token)), [token]);
  const refused = (message: string) => {
    forgetToken();
    setToken(undefined);
    setProblem(message);
  };
  const page = route.page;
  return (
    <>
      <header>
        <h1>Rewind</h1>
        {api !== undefined && (
          <nav aria-label="Pages">
            <a href="#/" aria-current={page === "overview" ? "page" : undefined}>
              Overview
            </a>
            <a href={runsHref()} aria-current={page !== "overview" ? "page" : undefined}>
              Runs
            </a>
          </nav>
        )}
        {/* The Overview says here when it last refreshed; the other pages refresh in place. */}
        <span id="updated" class="muted" hidden={page !== "overview"}></span>
        {api !== undefined && (
          <button id="forget" type="button" onClick={() => refused("")}>
            Forget token
          </button>
        )}
      </header>
      <main>
        <p id="problem" class="problem" role="alert" hidden={!problem}>
          {problem}
        </p>
        {api === undefined ? (
          <TokenForm
            onToken={(next) => {
              keepToken(next);
              setProblem(undefined);
              setToken(next);
            }}
            onProblem={setProblem}
          />
        ) : page === "overview" ? (
          <OverviewPage api={api} report={setProblem} refused={refused} />
        ) : page === "runs" ? (
          <RunsPage api={api} query={route.query} refused={refused} />
        ) : (
          <RunPage key={route.id} api={api} id={route.id} refused={refused} />
        )}
      </main>
    </>
  );
}

function TokenForm(props: { onToken: (token: string) => void; onProblem: (p: string) => void }) {
  useEffect(() => document.getElementById("token-input")?.focus(), []);
  return (
    <form
      id="token-form"
      onSubmit={(event) => {
        event.preventDefault();
        const input = document.getElementById("token-input") as HTMLInputElement;
        const token = input.value.trim();
        if (token === "") return props.onProblem("Paste an API token first.");
        input.value = "";
        props.onToken(token);
      }}
    >
      <h2>API token</h2>
      <p>
        Paste an API token of your namespace. <code>rewind dev</code> prints one (it is also in{" "}
        <code>.rewind/token</code>); <code>rewind token create</code> makes another. It is kept in
        this tab only.
      </p>
      <input id="token-input" type="password" autocomplete="off" required aria-label="API token" />
      <button type="submit">Open</button>
    </form>
  );
}

/** An explore file carries its run's data: the page shows that run, asking no server. */
function Root() {
  let data;
  try {
    data = embeddedData();
  } catch (error) {
    return (
      <p class="problem" role="alert">
        {(error as Error).message}
      </p>
    );
  }
  return data === undefined ? <App /> : <ExploreApp data={data} />;
}

render(<Root />, document.getElementById("app")!);
