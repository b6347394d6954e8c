/**
 * The methods an admin API path takes, for the 405 of a path asked with another one (RFC 9110 15.5.6;
 * newuser15 N10: `PATCH /admin/api/keys` answered 404 "Unknown path", which sends a script's author
 * looking for a typo in a path that exists, while `/v1` answers 405 with `Allow`).
 */

/** One route as Elysia lists it (`app.routes`). */
export interface ListedRoute {
  method: string;
  path: string;
}

/** Whether an Elysia route pattern (`/admin/api/keys/:name`) matches a path; a `*` pattern never does. */
function matches(pattern: string, path: string): boolean {
  if (pattern.includes("*")) return false;
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return false;
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w.startsWith(":") ? got[i] === "" : w !== got[i]) return false;
  }
  return true;
}

/**
 * The methods the routes under `prefix` serve `path` with, as an `Allow` value (`GET, HEAD, POST`: a GET
 * route answers HEAD too), or undefined when none serves it (an unknown path: a 404). `path` has no
 * trailing slash handling of its own: Elysia's router serves `/admin/api/keys/` as `/admin/api/keys`.
 */
export function allowedMethods(routes: readonly ListedRoute[], prefix: string, path: string): string | undefined {
  const methods = new Set<string>();
  const bare = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  for (const r of routes) {
    if (!r.path.startsWith(prefix) || r.method === "ALL" || r.method === "OPTIONS") continue;
    if (!matches(r.path, bare)) continue;
    methods.add(r.method);
    if (r.method === "GET") methods.add("HEAD");
  }
  if (methods.size === 0) return undefined;
  const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
  return [...methods].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99)).join(", ");
}
