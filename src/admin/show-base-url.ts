/**
 * A provider's `base_url` as the admin API shows it (SPEC 9.3: `GET /providers` lists base URLs, "never
 * credentials"). A base URL can carry a credential of its own: user info (an Ollama or vLLM behind a
 * password proxy, `http://user:pass@host/v1`) or a key in its query (`?api-key=…`, `?key=…`). Those are
 * masked: the user info whole, and the value of every query parameter but the ones known to hold none
 * ({@link PLAIN_QUERY_PARAMS}: Azure's `api-version`, Gemini's `alt`), so the operator still sees that
 * the URL has them, and which names. A URL that does not parse is shown as `(not a URL)`, never echoed.
 */
export function shownBaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "(not a URL)";
  }
  const userInfo = u.username !== "" || u.password !== "";
  const query = [...u.searchParams].map(([name, value]) => `${encodeURIComponent(name)}=${PLAIN_QUERY_PARAMS.has(name.toLowerCase()) ? encodeURIComponent(value) : MASK}`).join("&");
  // A bare origin stays bare: `URL` reads its path as "/", which the configured URL did not have.
  const path = u.pathname === "/" && !/^[^:]+:\/\/[^/?#]*\//.test(url) ? "" : u.pathname;
  return `${u.protocol}//${userInfo ? `${MASK}@` : ""}${u.host}${path}${query ? `?${query}` : ""}`;
}

/** What stands for a masked part. */
const MASK = "***";

/** Query parameters of a base URL that carry no credential, shown with their values (lower case). */
const PLAIN_QUERY_PARAMS = new Set(["api-version", "alt"]);
