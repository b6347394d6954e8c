/**
 * Dashboard sessions (SPEC 9.4): a browser that signed in with an admin-scope key (or a loopback
 * browser when keys are not required) holds an opaque session id in an HttpOnly, SameSite=Strict
 * cookie; every state-changing admin call it makes must also carry the session's CSRF token in the
 * `X-CSRF-Token` header (the page reads it from a `<meta>` tag of the HTML it was served).
 *
 * Sessions live in this process's memory only: they end when the instance restarts, and with several
 * instances behind a load balancer a session is valid on the instance that issued it (README).
 * Neither the session id nor the CSRF token is derived from the key; the key is kept in memory next to
 * its session only to re-check it on every call (Session.secret).
 */

/** The cookie that carries the session id. */
export const SESSION_COOKIE = "sy_session";
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
   * The key a browser signed in with, kept in this process's memory only (never sent, logged or
   * rendered) so every call re-checks it: a revoked key, or one a config reload removed or stripped of
   * the admin scope, ends its sessions at once.
   */
  secret?: string;
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

/** The sessions of this instance. */
export class SessionBook {
  private sessions = new Map<string, Session>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Issues a new session for `subject`, signed in with `secret` when a key was entered. At
   * {@link MAX_SESSIONS} the oldest session of the same kind (keyless or signed in with a key) goes
   * first: any web page can make a local browser load `/dashboard` a thousand times (an `<img>` sends
   * no cookie and no Origin), and those keyless sessions must not sign out the browsers that entered a key.
   */
  create(subject: string, secret?: string): Session {
    this.sweep();
    while (this.sessions.size >= MAX_SESSIONS) {
      let victim: string | undefined;
      for (const [id, s] of this.sessions) {
        if ((s.secret === undefined) === (secret === undefined)) {
          victim = id;
          break;
        }
      }
      this.sessions.delete(victim ?? this.sessions.keys().next().value!);
    }
    const s: Session = { id: randomToken(), csrf: randomToken(), subject, expiresAt: this.now() + SESSION_TTL_MS, ...(secret ? { secret } : {}) };
    this.sessions.set(s.id, s);
    return s;
  }

  /** The live session a request's cookie names, if any. */
  fromRequest(request: Request): Session | undefined {
    const id = cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (s.expiresAt <= this.now()) {
      this.sessions.delete(id);
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

  /** Ends a session. */
  end(id: string): void {
    this.sessions.delete(id);
  }

  /** Ends every session of a subject (a revoked key). */
  endSubject(subject: string): void {
    for (const [id, s] of this.sessions) if (s.subject === subject) this.sessions.delete(id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id);
  }
}

/** The `Set-Cookie` value that stores a session (HttpOnly, SameSite=Strict, whole site). */
export function sessionCookie(s: Session, secure: boolean): string {
  return `${SESSION_COOKIE}=${s.id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}${secure ? "; Secure" : ""}`;
}

/** The `Set-Cookie` value that removes the session cookie. */
export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}
