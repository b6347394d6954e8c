/**
 * Who may use the admin API and the dashboard's data (SPEC 9.3, 9.4). In order:
 *
 * 1. a header key (`Authorization: Bearer` or `x-api-key`) that is the per-start admin token of
 *    instance.json (the CLI) or a client key with the `admin` scope — no cookie or CSRF involved;
 * 2. a dashboard session cookie (src/admin/sessions.ts; call `sessions.sync(request)` first, so a session
 *    another instance issued or ended is seen) whose key is still valid with the admin scope
 *    (a session issued to a local browser without a key: while that browser is still local and keys are
 *    still not required): allowed, but a state-changing call (anything but GET, HEAD, OPTIONS) must
 *    carry the session's CSRF token, else 403 — a browser's cookie never authorises a call on its own;
 *    a session whose key or exemption lapsed is ended;
 * 3. a local caller (loopback peer, no `X-Forwarded-For` / `X-Real-IP`) when keys are not required;
 * 4. a valid client key without the admin scope: 403 naming the key;
 * 5. anyone else: 401 (saying to sign in again when a session cookie names no live session).
 */
import { isRemote, presentedKey } from "../../pipeline/index.ts";
import type { KeyLookup } from "../../pipeline/ports.ts";
import type { ClientKey } from "../../pipeline/ports.ts";
import { hashHex, safeEqual, sessionToken, type Session, type SessionBook } from "./sessions.ts";

/** What the access rule reads. */
export interface AdminAuth {
  /** The client keys; `lookupHash` (the store's) re-checks a session's sign-in key by its hash. */
  keys: KeyLookup & { lookupHash?(hex: string): ClientKey | undefined };
  /** The admin token written to instance.json at start (compared in constant time). */
  adminToken: string;
  requireApiKey: () => boolean;
  /** Dashboard sessions; without it cookies are ignored. */
  sessions?: SessionBook;
  /** What the refusals call the guarded surface ("/metrics"); the admin API's by default. */
  surface?: string;
}

/** The decision for one request. */
export type AdminDecision =
  | { ok: true; via: "token" | "key" | "session" | "loopback"; session?: Session }
  | { ok: false; status: 401 | 403; message: string };

/** Applies the rule of the module comment to one request. */
export function adminAccess(request: Request, peer: string | undefined, auth: AdminAuth): AdminDecision {
  const secret = presentedKey(request.headers);
  if (secret) {
    if (safeEqual(secret, auth.adminToken)) return { ok: true, via: "token" };
    if (auth.keys.lookup(secret)?.scopes.includes("admin")) return { ok: true, via: "key" };
  }
  let check = auth.sessions?.check(request) ?? { kind: "none" as const };
  const local = !isRemote(peer, request.headers);
  /** A session signed in with an admin token this instance no longer has (a restart makes a new one). */
  let tokenChanged = false;
  if (check.kind !== "none") {
    const s = check.session;
    // A session signed in with a key lasts only as long as the key is valid and has the admin scope.
    // (A session signed in with another instance's admin token is not valid here: each instance has its own.)
    const keyLapsed = s.keyHash !== undefined && !safeEqual(s.keyHash, hashHex(auth.adminToken)) && !auth.keys.lookupHash?.(s.keyHash)?.scopes.includes("admin");
    // A session issued to a local browser without a key (it only carries the CSRF token) lasts only as
    // long as the loopback exemption it was issued under: not once keys are required, never remotely.
    const exemptionLapsed = s.keyHash === undefined && (auth.requireApiKey() || !local);
    if (keyLapsed || exemptionLapsed) {
      tokenChanged = keyLapsed && s.subject === "admin-token";
      // Here only: another instance may still accept it (its own admin token, its own config keys); a
      // revoked key's sessions are ended everywhere by the revocation itself.
      auth.sessions!.drop(s.id);
      check = { kind: "none" };
    }
  }
  if (check.kind === "ok") return { ok: true, via: "session", session: check.session };
  if (check.kind === "csrf") {
    return { ok: false, status: 403, message: "This call changes state and needs the dashboard session's CSRF token in the X-CSRF-Token header." };
  }
  if (local && !auth.requireApiKey()) return { ok: true, via: "loopback" };
  // A valid client key without the admin scope is known, not unauthenticated: say which key lacks what
  // (as the dashboard's sign-in does), so its holder does not take it for a wrong or revoked key.
  const known = secret ? auth.keys.lookup(secret) : undefined;
  const surface = auth.surface ?? "the admin API";
  if (known) return { ok: false, status: 403, message: `Key ${known.name} has no admin scope; ${surface} needs a key created with --scope admin (switchyard keys create NAME --scope admin) or the instance's admin token.` };
  if (tokenChanged) return { ok: false, status: 401, message: ADMIN_TOKEN_CHANGED };
  // A cookie that names no live session (expired, signed out, its key lapsed, or issued before an
  // upgrade by a version that kept sessions in memory) is a browser to send to the sign-in page, not a
  // caller lacking a key (the upgrade tryout of 2026-12-07: it read "needs a key with the admin scope").
  if (!secret && auth.sessions && sessionToken(request)) return { ok: false, status: 401, message: SESSION_NOT_VALID };
  return { ok: false, status: 401, message: auth.surface === undefined ? "This admin API needs a key with the admin scope." : `Remote callers need a key with the admin scope for ${surface}.` };
}

/**
 * The 401 for a dashboard session signed in with an admin token that is not this instance's: another
 * instance's on a shared store (review14 R5), or this one's before a restart (each start writes a new
 * token to instance.json, so such a session ends with the process; newuser14 K11: after an upgrade it
 * read as a key without the admin scope).
 */
export const ADMIN_TOKEN_CHANGED =
  "This dashboard session was signed in with an admin token that is not this instance's: another instance's (each has its own), or this one's before it restarted (a new one is made at every start, in instance.json in the data directory). Sign in again; a session signed in with an admin-scope key (switchyard keys create NAME --scope admin) works on every instance and outlives restarts.";

/**
 * The 401 for a request whose dashboard session cookie names no live session and that carries no key:
 * the session expired (12 h), was signed out, its key was revoked, disabled or lost the admin scope, or
 * it was issued by a version that kept sessions in memory only (before an upgrade). The dashboard's
 * client shows its sign-in page on any 401 (src/dashboard/client/api.ts).
 */
export const SESSION_NOT_VALID =
  "This dashboard session is no longer valid: it expired or was signed out, its key was revoked, disabled or lost the admin scope, or it was made before an upgrade by a version that kept sessions in memory. Sign in again on the dashboard.";
