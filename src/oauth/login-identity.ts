/**
 * Whether two subscription credentials are one login (SPEC P-7, A-1): what decides whether another login
 * given to an account (the admin API's login or import) keeps its quota windows. A refresh token says it
 * only while the gateway has not rotated it: a login re-imported from an older file (the token the gateway
 * has since rotated away) carries other bytes, yet it is the same subscription. So the login's identity
 * decides when both credentials carry it: the provider's account id (Codex `chatgpt_account_id`), the
 * login's e-mail address (Claude's `oauthAccount.emailAddress` or token answer `account.email_address`;
 * Codex's `email` claim) and the access token's JWT subject (`sub`, Codex), each compared only when both
 * carry it; with none carried by both, the refresh token (src/store/secrets.ts `credentialFingerprint`).
 */
import type { Credential } from "../../pipeline/ports.ts";
import { credentialFingerprint } from "../store/secrets.ts";
import { jwtClaims } from "./protocol.ts";

/** The identity fields of an OAuth credential that are present: account id, e-mail (lower case), the access token's subject. */
function identity(c: Extract<Credential, { type: "oauth" }>): Array<string | undefined> {
  const sub = jwtClaims(c.accessToken)?.sub;
  return [c.accountId || undefined, c.email ? c.email.trim().toLowerCase() : undefined, typeof sub === "string" && sub ? sub : undefined];
}

/**
 * True when `a` and `b` are the same subscription login: the same refresh token (or access token without
 * one), or, for OAuth credentials, every identity field both carry equal and at least one carried by
 * both (see the module comment). False for API keys with other keys, and when nothing tells (a login
 * whose file named no e-mail against one that did is taken as another login: its windows go, and the
 * next reply refills them). O(1) (one JWT payload decoded per side).
 */
export function sameLogin(a: Credential, b: Credential): boolean {
  if (a.type !== b.type) return false;
  const fa = credentialFingerprint(a);
  if (fa !== undefined && fa === credentialFingerprint(b)) return true;
  if (a.type !== "oauth" || b.type !== "oauth") return false; // API keys: the same key only
  const ia = identity(a);
  const ib = identity(b);
  let shared = 0;
  for (let i = 0; i < ia.length; i++) {
    if (ia[i] === undefined || ib[i] === undefined) continue;
    if (ia[i] !== ib[i]) return false;
    shared++;
  }
  return shared > 0;
}
