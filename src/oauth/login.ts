/**
 * The interactive half of `switchyard login claude-code|codex` (SPEC P-9): an OAuth 2.0
 * authorisation-code flow with PKCE (S256), run by the CLI on the user's machine.
 *
 * Two ways back from the browser, decided by the provider's redirect URI:
 * - a loopback `http://localhost:PORT/…` or `http://127.0.0.1:PORT/…` redirect (Codex:
 *   `http://localhost:1455/auth/callback`) → a one-shot callback listener bound to 127.0.0.1 on that
 *   port (port 0 picks a free one and the redirect URI names it, as the Codex CLI does); the state
 *   must match; the browser's page is answered once the code has been exchanged for tokens, and says
 *   whether that worked (it said "Logged in" before the exchange, which could still fail: newuser12b's
 *   tryout, H15);
 * - any other redirect (Claude Code: Anthropic's hosted page shows `CODE#STATE`) → the user pastes
 *   the code into the terminal.
 *
 * The tokens are returned to the caller (which hands them to the running instance); nothing here
 * prints or logs them.
 */
import type { OAuthSettings } from "../config/types.ts";
import { createPkce, randomState } from "./pkce.ts";
import { authorizeUrl, exchangeCode, OAuthError, parsePastedCode, type SubscriptionKind, type TokenSet } from "./protocol.ts";

/** How the flow talks to the user. */
export interface LoginIO {
  /** Shows one line (the CLI writes it to stderr). */
  say(line: string): void;
  /** Reads one line the user types (the paste flow). */
  ask(prompt: string): Promise<string>;
  /** Opens a URL in the user's browser; best effort, may be absent. */
  open?(url: string): void | Promise<void>;
}

/** Options of {@link runLogin}. */
export interface LoginOptions {
  kind: SubscriptionKind;
  settings: OAuthSettings;
  io: LoginIO;
  fetchImpl?: typeof fetch;
  /** Give up after this many ms without a callback or pasted code (default 5 min). */
  timeoutMs?: number;
}

/** Default time a login may take, ms. */
export const LOGIN_TIMEOUT_MS = 5 * 60_000;

/** Time the code's exchange may take, ms: a token endpoint that never answers (a network that drops packets) ends the login with a timeout. */
export const EXCHANGE_TIMEOUT_MS = 60_000;

/** Whether a redirect URI points back at this machine over plain HTTP (a callback listener can take it). */
export function isLoopbackRedirect(uri: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(u.hostname);
  } catch {
    return false;
  }
}

/**
 * Runs the login and returns the tokens. @throws OAuthError when the provider refuses, Error on a
 * state mismatch, a timeout or a port that cannot be bound.
 */
export async function runLogin(opts: LoginOptions): Promise<TokenSet> {
  const pkce = createPkce();
  const state = randomState();
  const timeoutMs = opts.timeoutMs ?? LOGIN_TIMEOUT_MS;
  if (isLoopbackRedirect(opts.settings.redirectUri)) return callbackFlow(opts, pkce.verifier, pkce.challenge, state, timeoutMs);

  const redirectUri = opts.settings.redirectUri;
  const url = authorizeUrl(opts.kind, opts.settings, { challenge: pkce.challenge, state, redirectUri });
  opts.io.say("Open this URL in a browser and log in:");
  opts.io.say(url);
  await opts.io.open?.(url);
  const pasted = await withTimeout(opts.io.ask("Paste the code shown after login: "), timeoutMs, "no code was pasted in time");
  const { code, state: got } = parsePastedCode(pasted);
  if (!code) throw new Error("no authorisation code was pasted");
  if (got !== undefined && got !== state) throw new Error("the pasted code belongs to another login (state mismatch); run the login again");
  return exchangeCode(opts.kind, opts.settings, { code, verifier: pkce.verifier, state, redirectUri }, { fetchImpl: opts.fetchImpl, signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS) });
}

async function callbackFlow(opts: LoginOptions, verifier: string, challenge: string, state: string, timeoutMs: number): Promise<TokenSet> {
  const configured = new URL(opts.settings.redirectUri);
  const path = configured.pathname || "/";
  let settle!: (r: { code: string } | { error: string }) => void;
  const result = new Promise<{ code: string } | { error: string }>((resolve) => (settle = resolve));
  // How the code's exchange ended: the callback's page waits for it.
  const exchanged = Promise.withResolvers<string | undefined>();
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: Number(configured.port || 80),
      development: false,
      fetch(req) {
        const u = new URL(req.url);
        if (u.pathname !== path) return new Response("Not found", { status: 404 });
        if (u.searchParams.get("state") !== state) return new Response("State mismatch: this callback belongs to another login.", { status: 400 });
        const err = u.searchParams.get("error");
        if (err) {
          const said = `${err.slice(0, 80)}${u.searchParams.get("error_description") ? `: ${u.searchParams.get("error_description")!.slice(0, 160)}` : ""}`;
          settle({ error: said });
          return page("Login refused", `The provider refused the login (${escapeHtml(said)}). You can close this tab and look at the terminal.`, 400);
        }
        const code = u.searchParams.get("code");
        if (!code) return page("Login failed", "The callback carried no authorisation code.", 400);
        settle({ code });
        return exchanged.promise.then((failed) =>
          failed === undefined
            ? page("Logged in", "switchyard received the login; the terminal says which account it saved. You can close this tab.", 200)
            : page("Login failed", `switchyard could not exchange the login's code for tokens (${escapeHtml(failed)}). You can close this tab and look at the terminal.`, 502),
        );
      },
    });
  } catch (e) {
    throw new Error(`cannot listen for the login callback on 127.0.0.1:${configured.port || 80} (${e instanceof Error ? e.message : String(e)})`);
  }
  try {
    configured.port = String(server.port);
    const redirectUri = configured.toString();
    const url = authorizeUrl(opts.kind, opts.settings, { challenge, state, redirectUri });
    opts.io.say("Open this URL in a browser and log in (switchyard waits for the browser to come back):");
    opts.io.say(url);
    // Not awaited before the callback: an opener that waits for the page (a test's fetch) would wait
    // for the exchange, which waits for the callback.
    const opening = Promise.resolve(opts.io.open?.(url)).catch(() => {});
    const r = await withTimeout(result, timeoutMs, "the browser did not come back in time");
    if ("error" in r) throw new OAuthError(`the provider refused the login (${r.error})`, true);
    try {
      const tokens = await exchangeCode(opts.kind, opts.settings, { code: r.code, verifier, state, redirectUri }, { fetchImpl: opts.fetchImpl, signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS) });
      exchanged.resolve(undefined);
      await opening;
      return tokens;
    } catch (e) {
      exchanged.resolve(e instanceof Error ? e.message : String(e));
      await opening;
      throw e;
    }
  } finally {
    exchanged.resolve("the login was abandoned");
    // The browser's page is written before this returns or throws: the CLI exits right after, and an
    // exit before the write left the browser with an empty reply (a denied login's page did: it is
    // answered at once, and the exit came first). Then stop accepting, and close what is left shortly after.
    await pagesWritten(server, PAGE_WRITE_MS);
    void server.stop();
    setTimeout(() => server.stop(true), 2_000).unref?.();
  }
}

/** How long a login waits for its callback's pages to be written before it ends anyway, ms. */
const PAGE_WRITE_MS = 2_000;

/** Resolves once the server has no request in flight (each page written), or after `ms`. */
async function pagesWritten(server: { readonly pendingRequests: number }, ms: number): Promise<void> {
  const end = Date.now() + ms;
  // one turn first: a page returned just now counts as pending only once the server has taken it
  await Bun.sleep(0);
  while (server.pendingRequests > 0 && Date.now() < end) await Bun.sleep(5);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, text: string, status: number): Response {
  const html = `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;
  return new Response(html, { status, headers: { "content-type": "text/html; charset=utf-8", connection: "close" } });
}

async function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
