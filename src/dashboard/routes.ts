/**
 * The dashboard's HTTP routes (SPEC 9.4), served by the gateway process itself:
 *
 * - `GET /dashboard` and `GET /dashboard/{page}` (overview, accounts, routing, calls, usage, keys,
 *   setup): the HTML shell of the single-page app when the caller may use the admin API (a loopback
 *   caller when keys are not required, or a signed-in session), else the login page. Neither carries
 *   data: every figure the pages show comes from `/admin/api/…` (src/admin/access.ts decides).
 * - Any other path under /dashboard (a mistyped page): the dashboard's own 404 page, HTML with the same
 *   security headers, naming the path and linking back to the pages; it carries no data and no script,
 *   so it needs no sign-in. (Unknown assets stay JSON 404s, as the admin API and /v1 keep theirs.)
 * - `GET /dashboard/assets/{file}`: the bundled JavaScript and CSS (src/dashboard/assets.ts), embedded
 *   in the program; content-hashed names, cached for a year.
 * - `POST /dashboard/login` `{"key": "…"}` (as JSON; a body whose Content-Type is not JSON is the admin
 *   API's 415, a `text/plain` one is read when it is JSON): an admin-scope key (or the instance's admin token) →
 *   an HttpOnly, SameSite=Strict session cookie (src/admin/sessions.ts). The key stays in memory with
 *   the session so that revoking it (or a reload that drops it) signs the browser out. An address that
 *   entered too many wrong keys gets 429 for a while (src/admin/sign-in-throttle.ts).
 * - `POST /dashboard/logout`: ends the session (CSRF token required, as for every state change).
 *
 * Every dashboard response carries a strict Content-Security-Policy: scripts, styles and connections
 * from this origin only, no inline script or style element, no framing.
 */
import { Elysia } from "elysia";
import { isRemote, presentedKey, WWW_AUTHENTICATE } from "../../pipeline/index.ts";
import { adminAccess, type AdminAuth } from "../admin/access.ts";
import { readJson } from "../admin/replies.ts";
import { SignInThrottle, signInRefusal } from "../admin/sign-in-throttle.ts";
import { clearedSessionCookies, CSRF_HEADER, safeEqual, sessionCookie, type Session, type SessionBook } from "../admin/sessions.ts";
import { requestUrl } from "../http/browser-guard.ts";

/** The pages of the app (each is also a path under /dashboard). */
export const PAGES = ["overview", "accounts", "routing", "calls", "usage", "keys", "setup"] as const;

/** The Content-Security-Policy of every dashboard response. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** What the dashboard routes need: the admin access rule and its sessions. */
export interface DashboardDeps extends AdminAuth {
  /** `server.body_timeout_ms` in force: how long a request body may take to arrive (src/admin/replies.ts `readJson`); default 120 s. */
  bodyTimeoutMs?: () => number;
  sessions: SessionBook;
  /** Failed sign-ins per peer address (a fresh one when absent). */
  signIns?: SignInThrottle;
}

interface PeerSource {
  requestIP(r: Request): { address: string } | null;
}

const peerOf = (server: unknown, request: Request) => (server as PeerSource | null)?.requestIP(request)?.address;

/** `response` with the dashboard's {@link SECURITY_HEADERS} added (the admin API's replies, answered here as they are). */
function withSecurityHeaders(response: Response): Response {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
  return response;
}

const jsonError = (status: number, message: string, type = "invalid_request_error") =>
  new Response(JSON.stringify({ error: { message, type, param: null, code: null } }), {
    status,
    headers: { "content-type": "application/json", ...SECURITY_HEADERS, ...(status === 401 ? { "www-authenticate": WWW_AUTHENTICATE } : {}) },
  });

type Files = Map<string, { type: string; body: string }>;
let loaded: Promise<Files> | undefined;

/** The built files, loaded (and, when run from source, built) on first use. */
function files(): Promise<Files> {
  loaded ??= import("./assets.ts").then((m) => new Map(m.files.map((f) => [f.name, { type: f.type, body: f.text }])));
  return loaded;
}

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** The HTML shell: no inline script or style, only references to the bundled files. */
async function shell(view: "app" | "login", csrf: string, mode: string): Promise<string> {
  const all = await files();
  const names = [...all.keys()];
  const js = names.find((n) => n.startsWith("main-") && n.endsWith(".js"));
  const css = names.filter((n) => n.endsWith(".css"));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${escapeAttr(csrf)}">
<meta name="access-mode" content="${escapeAttr(mode)}">
<title>switchyard</title>
<link rel="icon" href="data:,">
${css.map((c) => `<link rel="stylesheet" href="/dashboard/assets/${c}">`).join("\n")}
</head>
<body data-view="${view}">
<div id="app"></div>
<noscript>The switchyard dashboard needs JavaScript. The same data is in the admin API (/admin/api/openapi.json) and the CLI.</noscript>
<script type="module" src="/dashboard/assets/${js}"></script>
</body>
</html>
`;
}

const html = (body: string, extra: Record<string, string> = {}, status = 200) =>
  new Response(body, { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...SECURITY_HEADERS, ...extra } });

const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const PAGE_LABELS: Record<(typeof PAGES)[number], string> = {
  overview: "Overview",
  accounts: "Accounts",
  routing: "Routing",
  calls: "Calls",
  usage: "Usage",
  keys: "Keys",
  setup: "Setup",
};

/**
 * The dashboard's 404 page for `rawPath` (percent-decoded, shown escaped and cut at 200 characters): static
 * HTML styled by the bundle's stylesheet, no script, no data, links to every page.
 */
async function notFoundPage(rawPath: string): Promise<Response> {
  let path = rawPath;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    // not valid percent-encoding: shown as requested
  }
  const css = [...(await files()).keys()].filter((n) => n.endsWith(".css"));
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  const links = PAGES.map((p) => `<li><a href="/dashboard/${p}">${PAGE_LABELS[p]}</a></li>`).join("");
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>No such page · switchyard</title>
<link rel="icon" href="data:,">
${css.map((c) => `<link rel="stylesheet" href="/dashboard/assets/${c}">`).join("\n")}
</head>
<body data-view="not-found">
<div class="login">
<main class="login-box not-found">
<div class="brand brand-dark"><span class="brand-mark">⇄</span> switchyard</div>
<h1>No such page</h1>
<p class="muted">The dashboard has no page at <code>${escapeText(shown)}</code>.</p>
<a class="btn btn-primary" href="/dashboard">Back to the dashboard</a>
<p class="muted small">Or go straight to a page:</p>
<ul class="not-found-pages">${links}</ul>
</main>
</div>
</body>
</html>
`;
  return html(body, {}, 404);
}

/** The request's own origin (`http://host:port`), from its URL and Host header. */
function ownOrigin(request: Request): string {
  const url = requestUrl(request.url);
  const host = request.headers.get("host") ?? url.host;
  return `${url.protocol}//${host}`;
}

const isSecure = (request: Request) => requestUrl(request.url).protocol === "https:" || request.headers.get("x-forwarded-proto") === "https";

/**
 * Whether the browser counts the request's origin as potentially trustworthy (W3C Secure Contexts 3.1):
 * HTTPS, or a loopback host (localhost, *.localhost, 127.0.0.0/8, [::1]) over plain HTTP.
 */
function trustworthyOrigin(request: Request): boolean {
  if (isSecure(request)) return true;
  const host = (request.headers.get("host") ?? requestUrl(request.url).host).toLowerCase().replace(/:\d+$/, "");
  return host === "localhost" || host.endsWith(".localhost") || /^127(\.\d{1,3}){3}$/.test(host) || host === "[::1]";
}

/**
 * A dashboard page as sent: without Cross-Origin-Opener-Policy on an origin the browser does not trust
 * (plain HTTP at a LAN name or address), where the browser ignores it and logs a console error on every
 * page (HTML, Cross-Origin-Opener-Policy: it applies to potentially trustworthy origins only).
 */
function asDocument(request: Request, response: Response): Response {
  if (!trustworthyOrigin(request)) response.headers.delete("cross-origin-opener-policy");
  return response;
}

/** The dashboard routes as an Elysia plugin. */
export function dashboardRoutes(deps: DashboardDeps) {
  const throttle = deps.signIns ?? new SignInThrottle();
  const page = async ({ request, server }: { request: Request; server: unknown }) => {
    await deps.sessions.sync(request);
    const access = adminAccess(request, peerOf(server, request), deps);
    if (!access.ok) return asDocument(request, html(await shell("login", "", "login")));
    // A browser allowed in without a session (loopback, or a header key) gets one, so its state
    // changes carry a CSRF token like everybody else's.
    let session: Session | undefined = access.session ?? deps.sessions.fromRequest(request);
    const extra: Record<string, string> = {};
    if (!session) {
      // A header key is kept with the session like a signed-in one, so revoking it ends the session.
      session = access.via === "loopback" ? await deps.sessions.create("loopback") : await deps.sessions.create(access.via, presentedKey(request.headers));
      extra["set-cookie"] = sessionCookie(session, isSecure(request));
    }
    // "loopback": this browser needs no sign-in (nothing to sign out of).
    const local = access.via === "loopback" || (session.subject === "loopback" && !isRemote(peerOf(server, request), request.headers) && !deps.requireApiKey());
    return asDocument(request, html(await shell("app", session.csrf, local ? "loopback" : "session"), extra));
  };

  return new Elysia()
    .get("/dashboard", page as never)
    .get("/dashboard/", page as never)
    .get("/dashboard/:page", (async (ctx: { request: Request; server: unknown; params: { page: string } }) => {
      if (!(PAGES as readonly string[]).includes(ctx.params.page)) return asDocument(ctx.request, await notFoundPage(requestUrl(ctx.request.url).pathname));
      return page(ctx);
    }) as never)
    .get("/dashboard/*", async ({ request }) => asDocument(request, await notFoundPage(requestUrl(request.url).pathname)))
    .get("/dashboard/assets/:name", async ({ params }) => {
      const f = (await files()).get(params.name);
      if (!f) return jsonError(404, `No dashboard asset ${params.name}.`, "not_found_error");
      return new Response(f.body, { headers: { "content-type": f.type, "cache-control": "public, max-age=31536000, immutable", ...SECURITY_HEADERS } });
    })
    .post(
      "/dashboard/login",
      async ({ request, server }) => {
        const origin = request.headers.get("origin");
        if (origin !== null && origin !== ownOrigin(request)) return jsonError(403, "Sign in from the dashboard's own page.", "permission_error");
        const peer = peerOf(server, request) ?? "unknown";
        const wait = throttle.retryAfterSeconds(peer);
        if (wait > 0) {
          const res = jsonError(429, signInRefusal(wait), "rate_limit_error");
          res.headers.set("retry-after", String(wait));
          return res;
        }
        // The admin API's timed read (server.body_timeout_ms): a body that never fully arrives is its 408
        // with Connection: close; a body whose Content-Type is not JSON its 415 (a `text/plain` one, what
        // `fetch` sends for a string body, is read when it is JSON), as the admin API answers them.
        const body = await readJson(request, deps.bodyTimeoutMs?.());
        if (!body.ok && (body.response.status === 408 || body.response.status === 415)) return withSecurityHeaders(body.response);
        const key = body.ok && body.value !== null && typeof body.value === "object" ? (body.value as { key?: unknown }).key : undefined;
        if (!body.ok || body.value === undefined) return jsonError(400, 'Send {"key": "…"} as JSON.');
        if (typeof key !== "string" || key.trim() === "") return jsonError(400, "key: enter an admin-scope key.");
        const secret = key.trim();
        let subject: string | undefined;
        if (safeEqual(secret, deps.adminToken)) subject = "admin-token";
        else {
          const k = deps.keys.lookup(secret);
          if (k?.scopes.includes("admin")) subject = k.name;
          else if (k) return jsonError(403, `Key ${k.name} has no admin scope; the dashboard needs a key created with --scope admin.`, "permission_error");
          else {
            // The right secret of a key an operator disabled for now: say so, not "not valid" (review13 R6).
            const off = deps.keys.disabled?.(secret);
            if (off) return jsonError(403, `Key ${off.name} is disabled for now; it signs in again once it is enabled (switchyard keys enable ${off.name}).`, "permission_error");
          }
        }
        if (!subject) {
          throttle.failed(peer);
          await Bun.sleep(200); // slows guessing a little; keys are long random strings anyway
          return jsonError(401, "That key is not valid.", "authentication_error");
        }
        throttle.succeeded(peer);
        const session = await deps.sessions.create(subject, secret);
        return new Response(JSON.stringify({ ok: true, subject }), {
          headers: { "content-type": "application/json", "set-cookie": sessionCookie(session, isSecure(request)), ...SECURITY_HEADERS },
        });
      },
      { parse: "none" },
    )
    .post(
      "/dashboard/logout",
      async ({ request }) => {
        // Signing out on any instance ends the session on all of them (it is read from the store first).
        await deps.sessions.sync(request);
        const s = deps.sessions.fromRequest(request);
        if (s) {
          const token = request.headers.get(CSRF_HEADER);
          if (!token || !safeEqual(token, s.csrf)) return jsonError(403, "Signing out needs the session's CSRF token.", "permission_error");
          await deps.sessions.end(s.id);
        }
        const headers = new Headers({ "content-type": "application/json", ...SECURITY_HEADERS });
        for (const c of clearedSessionCookies(isSecure(request))) headers.append("set-cookie", c);
        return new Response(JSON.stringify({ ok: true }), { headers });
      },
      { parse: "none" },
    );
}
