/**
 * The operator's API token. `rewind dev` prints the dashboard's address with the token in the
 * fragment (`#token=…`), which the browser never sends to a server; the page moves it into this
 * tab's sessionStorage and takes it out of the address bar, so it is not bookmarked, shared in a
 * screenshot or kept in history.
 */
const KEY = "rewind.token";

/** The token from the address (taking it out of the address bar) or from this tab's storage. */
export function takeToken(): string | undefined {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromAddress = fragment.get("token")?.trim();
  if (fragment.has("token")) {
    // Whatever else the fragment held (a page of the dashboard) stays.
    fragment.delete("token");
    const rest = fragment.toString();
    history.replaceState(
      history.state,
      "",
      `${location.pathname}${location.search}${rest ? `#${rest}` : ""}`,
    );
  }
  if (fromAddress) {
    keepToken(fromAddress);
    return fromAddress;
  }
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function keepToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
