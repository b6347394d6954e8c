/**
 * The dashboard-session role of the store (SPEC 9.4, D-2): the signed-in browsers, kept where every
 * instance on the store can check them, so a session issued by one instance is valid on all of them
 * (a load balancer needs no stickiness) and signing out on one ends it on all. Conventions: see
 * `./types.ts`.
 *
 * Nothing stored here is a secret: a row is keyed by the hex SHA-256 of the session token (the cookie
 * value), and names the key it was signed in with by the hex SHA-256 of that key (the same hash
 * `client_keys` holds). The token, the key and the CSRF token (an HMAC of the token keyed by the key's
 * hash, src/admin/sessions.ts) are never written.
 */
import type { Awaitable } from "./types.ts";

/** One dashboard session as stored. Times are ms since the epoch. */
export interface SessionRow {
  /** Hex SHA-256 of the session token. */
  tokenHash: string;
  /** Who signed in: a key's name, `admin-token`, or `loopback` (a local browser while keys are not required). */
  subject: string;
  /** Hex SHA-256 of the key the browser signed in with; null for a keyless (loopback) session. */
  keyHash: string | null;
  createdAt: number;
  expiresAt: number;
}

/** Dashboard sessions shared by every instance on the store. */
export interface SessionStore {
  /**
   * Stores a new session; ends the ones expired by its `createdAt`, and beyond `maxOfKind` sessions of its kind (keyless or
   * signed in with a key) the oldest of that kind (a flood of keyless sessions never ends a signed-in one).
   * @throws StoreError `unavailable` when a shared database cannot be reached (the caller keeps the session in memory)
   */
  putSession(row: SessionRow, maxOfKind: number): Awaitable<void>;
  /**
   * The session with this token hash, when stored (an expired one too: the caller checks `expiresAt`
   * against its own clock).
   * @throws StoreError `unavailable` when a shared database cannot be reached
   */
  getSession(tokenHash: string): Awaitable<SessionRow | undefined>;
  /** Ends one session (sign-out). @throws StoreError `unavailable` */
  deleteSession(tokenHash: string): Awaitable<void>;
  /**
   * Ends every session signed in with a key of these hashes (a stored key disabled or revoked: its secret's hash and a rotated
   * one's previous). By the key, not by the subject's name: a config key may share the name with a stored key (review15 R11).
   * @throws StoreError `unavailable`
   */
  deleteSessionsOfKeys(keyHashes: string[]): Awaitable<void>;
}
