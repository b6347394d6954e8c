/**
 * URLs the gateway shows without the credentials they may carry: three policies, one per place a URL
 * from the configuration or the environment is shown, each for why its reader needs what it keeps.
 *
 * - {@link shownBaseUrl}: a provider's base URL in the admin API (masks: user info and query values);
 * - {@link shownTracesUrl}: the OTLP traces endpoint in a log line (drops: user info, query, fragment);
 * - {@link webhookUrlShown}: the alert webhook in the settings API (hashes everything past the host).
 *
 * All three read the URL with WHATWG `URL` ({@link parsedUrl}) and never echo text that does not parse.
 */
import { createHash } from "node:crypto";

/** `url` parsed, or undefined when it is no URL (`new URL` throws). */
function parsedUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** Scheme, host and port of a parsed URL (`https://host:8443`), without user info. */
function originOf(u: URL): string {
  return `${u.protocol}//${u.host}`;
}

/** What stands for a masked part in {@link shownBaseUrl}. */
const MASK = "***";

/** Query parameters of a base URL that carry no credential, shown with their values (lower case). */
const PLAIN_QUERY_PARAMS = new Set(["api-version", "alt"]);

/**
 * A provider's `base_url` as the admin API shows it (SPEC 9.3: `GET /providers` lists base URLs, "never
 * credentials"). A base URL can carry a credential of its own: user info (an Ollama or vLLM behind a
 * password proxy, `http://user:pass@host/v1`) or a key in its query (`?api-key=…`, `?key=…`). Those are
 * masked, not dropped, because the operator reading the provider list checks the URL against the
 * config: the user info whole, and the value of every query parameter but the ones known to hold none
 * ({@link PLAIN_QUERY_PARAMS}: Azure's `api-version`, Gemini's `alt`), so the operator still sees that
 * the URL has them, and which names. A URL that does not parse is shown as `(not a URL)`, never echoed.
 */
export function shownBaseUrl(url: string): string {
  const u = parsedUrl(url);
  if (u === undefined) return "(not a URL)";
  const userInfo = u.username !== "" || u.password !== "";
  const query = [...u.searchParams].map(([name, value]) => `${encodeURIComponent(name)}=${PLAIN_QUERY_PARAMS.has(name.toLowerCase()) ? encodeURIComponent(value) : MASK}`).join("&");
  // A bare origin stays bare: `URL` reads its path as "/", which the configured URL did not have.
  const path = u.pathname === "/" && !/^[^:]+:\/\/[^/?#]*\//.test(url) ? "" : u.pathname;
  return `${u.protocol}//${userInfo ? `${MASK}@` : ""}${u.host}${path}${query ? `?${query}` : ""}`;
}

/**
 * The OTLP traces endpoint as a log line shows it (src/telemetry/otel.ts): `url` without user info,
 * query or fragment (they may carry credentials; a log line is copied around, and the reader needs only
 * where spans go), saying "(query not shown)" when it had one (so a log line does not name a URL the
 * exporter does not use as it reads); undefined when it is no http(s) URL (the caller then refuses it).
 */
export function shownTracesUrl(url: string): string | undefined {
  const u = parsedUrl(url);
  if (u === undefined || (u.protocol !== "http:" && u.protocol !== "https:")) return undefined;
  return `${originOf(u)}${u.pathname}${u.search ? " (query not shown)" : ""}`;
}

/**
 * A webhook URL as `GET /admin/api/settings` (and so the dashboard) shows it: scheme, host and port, and
 * for the rest (path, query, userinfo: where the secret of a Slack, Discord, Zapier or ntfy URL lives, in
 * no shape one could tell from an ordinary path) `…` and the first 8 hex digits of the whole URL's
 * SHA-256, so an operator can check which receiver is in force (`printf %s URL | sha256sum`) without the
 * API showing a token (review15 R2: path segments that did not look like tokens were shown whole).
 * `env:`/`file:` references are shown as written; text that is no URL is `[redacted]` whole.
 */
export function webhookUrlShown(url: string): string {
  if (/^(env|file):/.test(url)) return url;
  const u = parsedUrl(url);
  if (u === undefined) return "[redacted]";
  const hash = createHash("sha256").update(url).digest("hex").slice(0, 8);
  return `${originOf(u)}/… (sha256 ${hash})`;
}
