/**
 * Dashboard sessions (SPEC 9.4): a browser that signed in with an admin-scope key (or a loopback
 * browser when keys are not required) holds an opaque session token in an HttpOnly, SameSite=Strict
 * cookie; every state-changing admin call it makes must also carry the session's CSRF token in the
 * `X-CSRF-Token` header (the page reads it from a `<meta>` tag of the HTML it was served).
 *
 * Sessions are kept in the store (src/store/sessions.ts), so with several instances on one shared
 * store a session any of them issued is valid on all of them (a load balancer needs no stickiness) and
 * a sign-out on one ends it on all. The store holds hashes only: the token's SHA-256 and the sign-in
 * key's SHA-256 (the hash `client_keys` already holds); the CSRF token is an HMAC of the token keyed by
 * that key hash ({@link csrfFor}), so any instance that receives the cookie and reads the row knows it,
 * while the cookie alone does not give it (another web service on the same host name receives the cookie:
 * cookies are not isolated by port), and neither does the row alone (it holds the token's hash only).
 * This instance also keeps the sessions it saw in memory: while a shared database cannot be reached it
 * checks them there (a sign-out elsewhere meanwhile is seen when the database is back).
 * Neither the session token nor the CSRF token is derived from the key; every call re-checks the key by
 * its hash (a revoked key, or one a config reload removed or stripped of the admin scope, ends its
 * sessions at once).
 */
import { createHash, createHmac } from "node:crypto";
import type { SessionStore } from "../store/sessions.ts";

/** The cookie that carries the session id (over plain HTTP). */
export const SESSION_COOKIE = "sy_session";
/**
 * The cookie's name when the dashboard is served over HTTPS (directly or behind a proxy that says so with
 * `X-Forwarded-Proto: https`): the `__Host-` prefix makes a browser take it only with `Secure`, `Path=/`
 * and no `Domain`, so no plain-HTTP service on the host name, and no sibling host, can set or replace it.
 */
export const SECURE_SESSION_COOKIE = "__Host-sy_session";
/** The header that carries the CSRF token on state-changing calls. */
export const CSRF_HEADER = "x-csrf-token";
/** How long a session lasts after it was issued, ms (12 h). */
export const SESSION_TTL_MS = 12 * 3600_000;
/** Most sessions kept at once; the oldest goes first. */
export const MAX_SESSIONS = 1000;

/** One signed-in browser. */
export interface Session {
  id: string;
  csrf: string;
  /** Who signed in: the key's name, or `loopback` for a local browser when keys are not required. */
  subject: string;
  /** ms since the epoch. */
  expiresAt: number;
  /**
   * Hex SHA-256 of the key a browser signed in with (never the key), so every call re-checks it: a
   * revoked key, or one a config reload removed or stripped of the admin scope, ends its sessions at
   * once. Absent for a keyless (loopback) session.
   */
  keyHash?: string;
}

/** Hex SHA-256 of a UTF-8 string (a session token's or a key's, as the store keeps them). */
export function hashHex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The CSRF token of a session: base64url HMAC-SHA256 of its token, keyed by the hex SHA-256 of the key it
 * was signed in with (`keyHash`, as the store keeps it; for a keyless loopback session a fixed label).
 * Tied to the session (another session has another) and known to any instance that reads the session's
 * row, but not computable from the cookie alone: until 2026-12-06 it was the SHA-256 of a fixed label and
 * the token, so anything the cookie reached (any other web service on the same host name, whatever its
 * port: try21's tryout) could compute it and write through the admin API. A keyless session is accepted
 * only from a local caller while keys are not required, who needs no credential for the admin API anyway.
 */
export function csrfFor(token: string, keyHash?: string): string {
  return createHmac("sha256", keyHash === undefined ? "switchyard dashboard csrf (keyless)" : "switchyard dashboard csrf\0" + keyHash)
    .update(token, "utf8")
    .digest("base64url");
}

/** The session token a request's cookie carries: the `__Host-` one first, else the plain one. */
export function sessionToken(request: Request): string | undefined {
  const header = request.headers.get("cookie");
  return cookieValue(header, SECURE_SESSION_COOKIE) ?? cookieValue(header, SESSION_COOKIE);
}

const randomToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");

/** Compares two strings in time that depends on their length only. */
export function safeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  if (x.length !== y.length) return false;
  let d = 0;
  for (let i = 0; i < x.length; i++) d |= x[i] ^ y[i];
  return d === 0;
}

/** Reads one cookie's value from a `Cookie` header; undefined when absent. */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Methods that change nothing and need no CSRF token. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** What a session cookie on a request amounts to. */
export type SessionCheck =
  | { kind: "none" }
  | { kind: "ok"; session: Session }
  /** A valid session on a state-changing call without the right CSRF token. */
  | { kind: "csrf"; session: Session };

/** How often, at most, {@link SessionBook.syncSoon} re-reads one session from the store, ms. */
const SYNC_SOON_MS = 2_000;

/**
 * The dashboard sessions as this instance sees them: the store's (when one is given) and, in memory,
 * the ones it issued or read. {@link sync} reads a request's session from the store before the
 * synchronous checks ({@link check}, {@link fromRequest}) answer from memory.
 */
export class SessionBook {
  private sessions = new Map<string, Session>();
  private syncedAt = new Map<string, number>();

  /**
   * @param now ms since the epoch
   * @param store where sessions are shared; without it they live in this process's memory only
   * @param onError told when the store refused a session write that is not an outage (messages carry no secret)
   */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly store?: SessionStore,
    private readonly onError: (message: string) => void = () => {},
  ) {}

  /**
   * Issues a new session for `subject`, signed in with `secret` when a key was entered (only its hash is
   * kept). At {@link MAX_SESSIONS} the oldest session of the same kind (keyless or signed in with a key)
   * goes first: any web page can make a local browser load `/dashboard` a thousand times (an `<img>`
   * sends no cookie and no Origin), and those keyless sessions must not sign out the browsers that
   * entered a key. Stored for every instance; when the store cannot take it, valid on this one only.
   */
  async create(subject: string, secret?: string): Promise<Session> {
    this.sweep();
    while (this.sessions.size >= MAX_SESSIONS) {
      let victim: string | undefined;
      for (const [id, s] of this.sessions) {
        if ((s.keyHash === undefined) === (secret === undefined)) {
          victim = id;
          break;
        }
      }
      this.forget(victim ?? this.sessions.keys().next().value!);
    }
    const id = randomToken();
    const createdAt = this.now();
    const keyHash = secret ? hashHex(secret) : undefined;
    const s: Session = { id, csrf: csrfFor(id, keyHash), subject, expiresAt: createdAt + SESSION_TTL_MS, ...(keyHash ? { keyHash } : {}) };
    this.sessions.set(s.id, s);
    this.syncedAt.set(s.id, createdAt);
    if (this.store) {
      try {
        await this.store.putSession({ tokenHash: hashHex(id), subject, keyHash: s.keyHash ?? null, createdAt, expiresAt: s.expiresAt }, MAX_SESSIONS);
      } catch (e) {
        if ((e as { code?: unknown })?.code !== "unavailable") this.onError(`dashboard session not stored: ${(e as Error)?.message ?? e}`);
      }
    }
    return s;
  }

  /**
   * Reads the session a request's cookie names from the store into memory (or drops it from memory when
   * the store has it no more: signed out or ended on another instance). Keeps memory as it is while the
   * store cannot be reached. Never throws.
   */
  async sync(request: Request): Promise<void> {
    const id = sessionToken(request);
    if (!id || !this.store) return;
    try {
      const row = await this.store.getSession(hashHex(id));
      this.syncedAt.set(id, this.now());
      if (!row || row.expiresAt <= this.now()) {
        this.forget(id);
        return;
      }
      if (!this.sessions.has(id)) this.sweep();
      this.sessions.set(id, { id, csrf: csrfFor(id, row.keyHash ?? undefined), subject: row.subject, expiresAt: row.expiresAt, ...(row.keyHash ? { keyHash: row.keyHash } : {}) });
    } catch {
      // unreachable: memory answers until it is back
    }
  }

  /**
   * {@link sync}, at most every {@link SYNC_SOON_MS} per session, in the background: for checks that
   * must answer at once (an open event stream re-checking its reader).
   */
  syncSoon(request: Request): void {
    const id = sessionToken(request);
    if (!id || !this.store) return;
    const last = this.syncedAt.get(id) ?? 0;
    if (this.now() - last < SYNC_SOON_MS) return;
    this.syncedAt.set(id, this.now());
    void this.sync(request);
  }

  /** The live session a request's cookie names, if any (from memory: {@link sync} first). */
  fromRequest(request: Request): Session | undefined {
    const id = sessionToken(request);
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (s.expiresAt <= this.now()) {
      this.forget(id);
      return undefined;
    }
    return s;
  }

  /**
   * Checks a request's session cookie: `none` without a live session, `csrf` when a state-changing
   * method (anything but GET, HEAD, OPTIONS) lacks the session's token in `X-CSRF-Token`, else `ok`.
   */
  check(request: Request): SessionCheck {
    const session = this.fromRequest(request);
    if (!session) return { kind: "none" };
    if (SAFE_METHODS.has(request.method)) return { kind: "ok", session };
    const token = request.headers.get(CSRF_HEADER);
    return token && safeEqual(token, session.csrf) ? { kind: "ok", session } : { kind: "csrf", session };
  }

  /** Stops accepting a session on this instance only (its key lapsed here, e.g. another instance's admin token). */
  drop(id: string): void {
    this.forget(id);
  }

  /** Ends a session on every instance (sign-out). Never throws; an outage leaves the stored row to expire. */
  async end(id: string): Promise<void> {
    this.forget(id);
    try {
      await this.store?.deleteSession(hashHex(id));
    } catch (e) {
      if ((e as { code?: unknown })?.code !== "unavailable") this.onError(`dashboard session not ended in the store: ${(e as Error)?.message ?? e}`);
    }
  }

  /**
   * Ends, on every instance, every session signed in with a key of these hex SHA-256 hashes (a revoked or
   * disabled stored key's: `KeyStore.storedKeyHashes`), a header-key browser's included. By the key, not
   * its name: a config key of the same name keeps its sessions (review15 R11). Never throws.
   */
  async endKey(keyHashes: string[]): Promise<void> {
    if (keyHashes.length === 0) return;
    const ended = new Set(keyHashes);
    for (const [id, s] of this.sessions) if (s.keyHash !== undefined && ended.has(s.keyHash)) this.forget(id);
    try {
      await this.store?.deleteSessionsOfKeys(keyHashes);
    } catch (e) {
      if ((e as { code?: unknown })?.code !== "unavailable") this.onError(`dashboard sessions not ended in the store: ${(e as Error)?.message ?? e}`);
    }
  }

  private forget(id: string): void {
    this.sessions.delete(id);
    this.syncedAt.delete(id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.forget(id);
    if (this.syncedAt.size > 4 * MAX_SESSIONS) this.syncedAt.clear();
  }
}

/**
 * The `Set-Cookie` value that stores a session (HttpOnly, SameSite=Strict, whole site). Over HTTPS
 * (`secure`) it is `Secure` and named {@link SECURE_SESSION_COOKIE}, else {@link SESSION_COOKIE}.
 */
export function sessionCookie(s: Session, secure: boolean): string {
  return `${secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE}=${s.id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}${secure ? "; Secure" : ""}`;
}

/**
 * The `Set-Cookie` values that remove the session cookie: {@link sessionCookie}'s name for `secure`, and
 * over HTTPS also the plain name, which versions before 2026-12-06 set there (`Secure`) too.
 */
export function clearedSessionCookies(secure = false): string[] {
  const plain = `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
  return secure ? [`${SECURE_SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure`, `${plain}; Secure`] : [plain];
}
