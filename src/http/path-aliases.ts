/**
 * Base-URL mistakes GUI apps make (SPEC 2.1: a path no route serves is a JSON 404 in the client's
 * format, never HTML):
 * - a base URL ending in `/` (`http://127.0.0.1:20128/v1/` + `/chat/completions`) asks for
 *   `/v1//chat/completions`: `collapseSlashes` (src/http/browser-guard.ts) gives the path with repeated slashes collapsed,
 *   which the server then serves as that path (src/http/server.ts, `servedAlias`; Codex's WebSocket
 *   upgrade `GET /v1//responses` too), as it serves `/v1/v1/messages` for a base URL that already ends
 *   in `/v1`;
 * - a base URL without `/v1` (`http://127.0.0.1:20128` + `/chat/completions`): not served (the browser
 *   rules and CORS cover `/v1` and `/v1beta` only, src/http/browser-guard.ts `clientSurface`), but its 404
 *   names the path under `/v1` and says to end the base URL with `/v1` ({@link pathHint});
 * - a base URL with `/v1` twice for an OpenAI client (`…/v1/v1` + `/chat/completions`, `/responses`,
 *   `/models`): not served (only `/v1/v1/messages` is, the Anthropic SDK's path for a base URL ending in
 *   `/v1`, an easy mistake since every OpenAI client wants it), but its 404 names the path and says to
 *   end the base URL with `/v1` once ({@link pathHint});
 * - an OpenAI endpoint the gateway does not serve (`/v1/embeddings`, the legacy `/v1/completions`,
 *   audio, images, moderations): its 404 says so, so the user knows it is not a base-URL mistake;
 * - the base address itself (`/`, which `scripts/start` prints): a browser is sent to `/dashboard`, an
 *   API client's 404 names the dashboard and the API paths ({@link rootAnswer}).
 */
import { errorResponse } from "../../pipeline/index.ts";
import { hubError } from "../../formats/hub.ts";
import { formatForPath } from "./browser-guard.ts";

/** Paths served under `/v1` that an app with a base URL lacking `/v1` asks for without it (exact; `/models/{id}` too). */
const UNDER_V1 = ["/chat/completions", "/responses", "/messages", "/messages/count_tokens", "/models"];

/** OpenAI endpoints the gateway does not serve, by path prefix, with what they are (README "What runs today"). */
const NOT_SERVED: ReadonlyArray<readonly [string, string]> = [
  ["/v1/embeddings", "embeddings"],
  ["/v1/completions", "the legacy completions API"],
  ["/v1/audio/", "audio (speech, transcriptions, translations)"],
  ["/v1/images/", "images"],
  ["/v1/moderations", "moderations"],
];

/**
 * The 404 of a path no route serves that is a known mistake (see the module comment), in the client's
 * format of the path it names (`/messages` → Anthropic's, via {@link formatForPath} of the `/v1` path):
 * code `unknown_url` as any unknown path. `host` is the request's `Host`, to write the base URL the app
 * should use. Undefined for any other path (then the plain 404).
 */
export function pathHint(method: string, path: string, headers: Headers): Response | undefined {
  const host = headers.get("host");
  const base = host ? `http://${host}/v1` : "the gateway's address followed by /v1";
  if (UNDER_V1.includes(path) || path.startsWith("/models/")) {
    const right = `/v1${path}`;
    const message =
      `Unknown path: ${method} ${path.slice(0, 300)}. This gateway serves the API under /v1: the path is ${method} ${right.slice(0, 300)}. ` +
      `Set the app's base URL to ${base.slice(0, 300)} (an app that adds /v1 itself, such as the Anthropic SDK, takes it without /v1).`;
    return errorResponse(formatForPath(right, headers), hubError("not_found", message, { code: "unknown_url" }));
  }
  const once = path.startsWith("/v1/v1/") ? path.slice(3) : undefined;
  if (once !== undefined && (UNDER_V1.includes(once.slice(3)) || once.startsWith("/v1/models/"))) {
    const message =
      `Unknown path: ${method} ${path.slice(0, 300)}. The path has /v1 twice: it is ${method} ${once.slice(0, 300)}. ` +
      `Set the app's base URL to ${base.slice(0, 300)}, with /v1 once (an app that adds /v1 itself, such as the Anthropic SDK, takes it without /v1).`;
    return errorResponse(formatForPath(once, headers), hubError("not_found", message, { code: "unknown_url" }));
  }
  for (const [prefix, what] of NOT_SERVED) {
    if (prefix.endsWith("/") ? path.startsWith(prefix) || `${path}/` === prefix : path === prefix || path.startsWith(`${prefix}/`)) {
      const message =
        `Unknown path: ${method} ${path.slice(0, 300)}. This gateway does not serve ${what}; it serves chat completions, responses, messages ` +
        `(and count_tokens), Gemini's generateContent and the model lists. Point this feature of the app at a provider directly.`;
      return errorResponse(formatForPath(path, headers), hubError("not_found", message, { code: "unknown_url" }));
    }
  }
  return undefined;
}

/**
 * The answer to the base address `/` (what `switchyard start` prints), which no route serves: a browser
 * (GET or HEAD whose `Accept` names `text/html`) gets a 302 to `/dashboard`; anyone else the JSON 404
 * (code `unknown_url`, the OpenAI shape unless the headers name another format, as any unknown path)
 * whose message names the dashboard and the API paths. Undefined for any other path.
 */
export function rootAnswer(method: string, path: string, headers: Headers): Response | undefined {
  if (path !== "/") return undefined;
  if ((method === "GET" || method === "HEAD") && /\btext\/html\b/i.test(headers.get("accept") ?? "")) {
    return new Response(null, { status: 302, headers: { location: "/dashboard", "cache-control": "no-store" } });
  }
  const message =
    `Unknown path: ${method} /. This is switchyard's base address: the dashboard is at /dashboard (open it in a browser); ` +
    `the API is under /v1 (POST /v1/chat/completions, /v1/responses, /v1/messages; GET /v1/models) and Gemini's under /v1beta/models ` +
    `(a client's base URL is this address followed by /v1, or the address alone for the Anthropic SDK and Gemini clients).`;
  return errorResponse(formatForPath(path, headers), hubError("not_found", message, { code: "unknown_url" }));
}
