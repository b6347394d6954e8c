/**
 * `switchyard login claude-code|codex [--account NAME] [--provider ID] [--priority N] [--no-browser]` (SPEC 2.2,
 * P-9): runs the provider's OAuth PKCE flow on this machine (src/oauth/login.ts) with the OAuth
 * client the running instance is configured for (`GET /admin/api/oauth/{kind}`), then hands the
 * tokens to the instance (`POST /admin/api/accounts`), which stores them. No token is printed.
 */
import { runLogin, type LoginIO } from "../oauth/login.ts";
import { isSubscription } from "../oauth/protocol.ts";
import type { OAuthSettings } from "../config/types.ts";
import type { AdminCall, CliIo } from "./routing.ts";
import { parsePriority } from "../admin/subscription-routes.ts";

/** Options of `switchyard login`. */
export interface LoginCommandOptions {
  /** Account name; default `<provider>-<e-mail name>`. */
  account?: string;
  /** Provider id when several of the kind exist; default the built-in one (`cc`, `cx`). */
  provider?: string;
  /** `--priority N` as typed: the account's place in its provider's list, lower first; absent keeps an account's (0 for a new one). */
  priority?: string;
  /** Do not try to open a browser. */
  noBrowser?: boolean;
}

/** The user-facing side of the flow (stderr lines, a typed line, a browser). */
export interface LoginCliIo extends CliIo {
  /** A progress line (stderr, so stdout stays for the result). */
  err: (line: string) => void;
  ask: LoginIO["ask"];
  open?: LoginIO["open"];
  fetchImpl?: typeof fetch;
}

/** Runs the login and stores the account; prints one result line. */
export async function loginCommand(kind: string | undefined, opts: LoginCommandOptions, call: AdminCall, io: LoginCliIo): Promise<void> {
  if (!kind || !isSubscription(kind)) io.fail("usage: switchyard login claude-code|codex [--account NAME] [--provider ID] [--priority N] [--no-browser]", 2);
  // Checked before the browser opens: a login is not run for nothing.
  const priority = parsePriority(opts.priority);
  if (priority.problem) io.fail(priority.problem, 2);
  const found = (await call("GET", `/oauth/${encodeURIComponent(opts.provider ?? kind)}`)) as {
    providers: Array<{ id: string; kind: string; oauth: OAuthSettings }>;
  };
  const provider = found.providers.find((p) => p.kind === kind);
  if (!provider) io.fail(`provider ${opts.provider ?? kind} is not a ${kind} provider`);
  let tokens;
  try {
    tokens = await runLogin({
      kind,
      settings: provider.oauth,
      io: { say: io.err, ask: io.ask, open: opts.noBrowser ? undefined : io.open },
      fetchImpl: io.fetchImpl,
    });
  } catch (e) {
    io.fail(`login failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  const credential: Record<string, unknown> = { type: "oauth", access_token: tokens.accessToken };
  if (tokens.refreshToken) credential.refresh_token = tokens.refreshToken;
  if (tokens.expiresAt !== undefined) credential.expires_at = tokens.expiresAt;
  if (tokens.accountId) credential.account_id = tokens.accountId;
  const r = (await call("POST", "/accounts", { provider: provider.id, kind, id: opts.account, credential, email: tokens.email, origin: "login", priority: priority.value })) as {
    id: string;
    provider: string;
    created: boolean;
  };
  io.out(`logged in: account ${r.id} (provider ${r.provider}${priority.value !== undefined ? `, priority ${priority.value}` : ""}) ${r.created ? "added" : "updated"}; requests for ${r.provider}/… can use it now`);
}

/** Opens a URL in the desktop browser, best effort (xdg-open, open, or start). */
export function openBrowser(url: string): void {
  const cmd = process.platform === "darwin" ? ["open", url] : process.platform === "win32" ? ["cmd", "/c", "start", "", url] : ["xdg-open", url];
  try {
    const p = Bun.spawn(cmd, { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    p.unref();
  } catch {
    // no browser here: the URL is printed anyway
  }
}
