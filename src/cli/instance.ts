/**
 * Finding the running instance and calling its admin API (SPEC 2.2): `--url`, else `instance.json` in the
 * data directory (`--data-dir`, default `$SWITCHYARD_HOME`, else `~/.switchyard`), with `--key` or
 * `SWITCHYARD_ADMIN_KEY` (else the instance file's admin token). Every failure is one line and an exit.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { askAdmin, NoAnswer, noAnswerLine } from "./admin-request.ts";
import { fail, visible } from "./terminal.ts";
import { buildSource } from "../version.ts";

/** The one line printed when no `instance.json` names a running instance. */
export function noInstance(file: string): string {
  return `no running switchyard instance found (no ${file}); start one with switchyard start (scripts/start in a source checkout), or name it with --data-dir DIR or --url URL`;
}

/**
 * The one line printed when the instance's address does not answer: with `--url`, that address; from
 * `instance.json`, also that the file is stale (its instance stopped without removing it, e.g. killed).
 */
export function notAnswering(values: Record<string, unknown>, dataDir: string, url: string): string {
  if (values.url) return `no running switchyard instance answers at ${url}`;
  return `no running switchyard instance answers at ${url}, the address in ${join(dataDir, "instance.json")} (left by an instance that has stopped); start one with switchyard start (scripts/start in a source checkout)`;
}

/**
 * Why `--url` cannot name the gateway, or undefined when it can: it is the gateway's address,
 * `http(s)://HOST:PORT` with no path. A client's base URL (`…/v1`) was sent on as
 * "error 404: Unknown path: GET /v1/admin/api/calls", a dashboard address as its 404 page's HTML,
 * and a URL without `http://` as "no running switchyard instance answers at …", though one did.
 */
export function urlProblem(given: string): string | undefined {
  const wanted = `--url is the gateway's address, http://HOST:PORT with no path (e.g. http://127.0.0.1:20128)`;
  const noScheme = /^[\w.-]+:\d+\/?$/.test(given) ? ` (write http://${given.replace(/\/$/, "")})` : "";
  let u: URL;
  try {
    u = new URL(given);
  } catch {
    return `${wanted}, not ${JSON.stringify(given)}${noScheme}`;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return `${wanted}, not ${JSON.stringify(given)}${noScheme}`;
  if (u.pathname.replace(/\/+$/, "") !== "" || u.search || u.hash) {
    const client = /^\/v1(beta)?\/?$/.test(u.pathname) ? `: ${u.pathname.replace(/\/+$/, "")} belongs to a client's base URL, not to the gateway's address` : "";
    return `${wanted}, not ${JSON.stringify(given)}${client} (use ${u.origin})`;
  }
  return undefined;
}

/** The running instance's base URL: `--url`, else `instance.json` in the data directory; exits with one line when none. */
export function instanceUrl(values: Record<string, unknown>, dataDir: string): string {
  const given = values.url as string | undefined;
  if (given) return given.replace(/\/+$/, "");
  const file = join(dataDir, "instance.json");
  if (!existsSync(file)) fail(noInstance(file));
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { url: string }).url.replace(/\/+$/, "");
  } catch {
    fail(`cannot read ${file}`);
  }
}

/**
 * Whether the instance of `instance.json` in `dataDir` was started on port 0 (`ephemeralPort`, written at
 * start): its URL's port was picked for that start and changes at the next. False when the file is
 * missing or unreadable.
 */
export function instanceOnEphemeralPort(dataDir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dataDir, "instance.json"), "utf8")) as { ephemeralPort?: unknown }).ephemeralPort === true;
  } catch {
    return false;
  }
}

/**
 * Finds the running instance and calls its admin API; exits with one line when none runs or it answers
 * an error, except a 404 with `opts.notFound`, which is handed back as an `AdminNotFound` (src/cli/routing.ts).
 * A 405 (the instance's build has the path but not this method: `keys set`'s PATCH against a gateway
 * started before it existed) says so in `opts.what`'s words ({@link methodNotThere}). `opts.refused`
 * is handed an error answer of the gateway's own (`{error: …}`) with its status first (it may print it
 * and exit; when it returns, the error line follows).
 */
export async function admin(
  values: Record<string, unknown>,
  dataDir: string,
  method: string,
  path: string,
  body?: unknown,
  opts?: { notFound?: boolean; what?: string; refused?: (status: number, data: unknown) => void },
): Promise<unknown> {
  let url = values.url as string | undefined;
  let token = (values.key as string | undefined) ?? process.env.SWITCHYARD_ADMIN_KEY;
  let inst: InstanceFile | undefined;
  if (!url) {
    const file = join(dataDir, "instance.json");
    if (!existsSync(file)) fail(noInstance(file));
    try {
      inst = JSON.parse(readFileSync(file, "utf8")) as InstanceFile;
      url = inst.url;
      token ??= inst.adminToken;
    } catch {
      fail(`cannot read ${file}`);
    }
  }
  const answer = await askAdmin(url!, token, method, path, body);
  if (answer === undefined) fail(notAnswering(values, dataDir, url!));
  if (answer instanceof NoAnswer) fail(noAnswerLine(url!, answer));
  const { status, data } = answer;
  if (status < 200 || status > 299) {
    // the gateway's (or a proxy's) words, which may quote a name a client chose: escaped, one line
    // a command that prints JSON says the gateway's own refusal as JSON too (`reload --json`)
    if (opts?.refused && (data as { error?: unknown })?.error !== undefined) opts.refused(status, data);
    const msg = visible((data as { error?: { message?: string } })?.error?.message ?? (typeof data === "string" ? data : JSON.stringify(data)));
    if (status === 404 && opts?.notFound) {
      const { AdminNotFound } = await import("./routing.ts");
      return new AdminNotFound(msg);
    }
    // The gateway's own 405 (its JSON error, code method_not_allowed) says its build is older; another
    // (a proxy in front of a --url gateway that does not pass the method on) is said as it came, with
    // both readings (review20 R7: "upgrade it or restart it" is the wrong advice for a proxy).
    if (status === 405 && (data as { error?: { code?: unknown } })?.error?.code === "method_not_allowed") fail(methodNotThere(url!, inst, opts?.what ?? `${method} /admin/api${path}`, `${method} /admin/api${path}`));
    if (status === 405) fail(`error 405: ${msg} (${url} does not take ${method} on /admin/api${path}: a proxy in front of the gateway that does not pass ${method} on, or a gateway build from before 2026-12-05)`);
    const unknownPath = status === 404 && (data as { error?: { code?: unknown } })?.error?.code === "unknown_url";
    fail(`error ${status}: ${msg}${unknownPath && inst ? olderBuildHint(inst, buildSource().commit) : ""}`);
  }
  return data;
}

/**
 * Said after a 405 from the admin API: the running gateway at `url` (of instance.json `inst` when read)
 * takes `route`'s path but not its method, so it cannot do `what` ("changing a key"): its build is older
 * than this command's. Until 2026-12-06 the CLI printed "error 405" and the instance's message, which
 * said neither that the gateway was too old nor what to do (`keys set` against a gateway started
 * before PATCH /admin/api/keys/{name} existed).
 */
export function methodNotThere(url: string, inst: InstanceFile | undefined, what: string, route: string): string {
  const pid = inst?.pid ? ` (pid ${inst.pid}${inst.commit && inst.commit !== "unknown" ? `, commit ${inst.commit}` : ""})` : "";
  return `the running gateway at ${url}${pid} does not support ${what} (HTTP 405: it has no ${route}); upgrade it or restart it on this version (switchyard start, or switchyard service install), then run the command again`;
}

/** What `start` writes to DATA_DIR/instance.json (src/app.ts), as far as the CLI reads it. */
interface InstanceFile {
  url: string;
  adminToken: string;
  pid?: number;
  version?: string;
  /** The build's commit (since 2026-12-05; an older build writes none). */
  commit?: string;
}

/**
 * Said after a 404 `unknown_url` from the instance of instance.json: when it runs another build than this
 * command's (its commit differs, or it is older than builds that write one), the path is likely one its
 * build does not have yet; a rebuilt CLI talking to the instance started before it said only "Unknown path"
 * (newuser14 K2). Empty when both are the same build or nothing is known.
 */
export function olderBuildHint(inst: InstanceFile, ownCommit: string | undefined): string {
  // One commit with and without uncommitted edits is the same build here (review14 R4): a source
  // checkout's own edits make this command's commit `abc1234-dirty`.
  const base = (c: string | undefined) => (c === undefined || c === "unknown" ? undefined : c.replace(/-dirty$/, ""));
  const pid = inst.pid ? ` (pid ${inst.pid})` : "";
  const restart = "restart the instance with this build (switchyard start, or service install) to get the admin API this command uses";
  // Builds since 9dab8fc write `commit` always ("unknown" when they could not tell): none is an older build.
  if (inst.commit === undefined) return `; the running instance${pid} is a build older than this command's (it names no commit): ${restart}`;
  const running = base(inst.commit);
  const own = base(ownCommit);
  if (running === undefined || own === undefined) return `; the running instance${pid} may be another build than this command's (${running === undefined ? "its" : "this command's"} commit is not known): if it was started before this build, ${restart}`;
  if (running === own) return "";
  return `; the running instance${pid} is commit ${inst.commit} and this command is commit ${ownCommit}: ${restart}`;
}
