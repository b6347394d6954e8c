/**
 * One call of a running instance's admin API (`/admin/api…`, SPEC 9.3) for the CLI: the request with
 * the admin token as a bearer key, and the answer's JSON (or its text when it is not JSON). Used by
 * the commands that talk to the instance (src/main.ts `admin`) and by `setup`'s questions to it
 * (src/cli/setup-command.ts); each says in its own words what a failure means.
 */

/** An answer of the admin API: its HTTP status and its JSON body (or the body's text when it is not JSON). */
export interface AdminAnswer {
  status: number;
  data: unknown;
}

/**
 * Calls `method` `path` (below `/admin/api`) at `url` (a trailing slash is dropped), with `token` as
 * `Authorization: Bearer` when given and `body` as JSON when given. Resolves to undefined when nothing
 * answers at `url` (refused, unreachable), else to the answer whatever its status.
 */
export async function askAdmin(url: string, token: string | undefined, method: string, path: string, body?: unknown): Promise<AdminAnswer | undefined> {
  let res: Response;
  try {
    res = await fetch(`${url.replace(/\/+$/, "")}/admin/api${path}`, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    return undefined;
  }
  const text = await res.text();
  let data: unknown = text;
  try {
    data = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, data };
}
