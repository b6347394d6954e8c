/**
 * PKCE (RFC 7636) for the subscription logins (SPEC P-9): a high-entropy code verifier, its S256
 * challenge, and the `state` value that ties a callback to the login that started it.
 */
import { createHash, randomBytes } from "node:crypto";

/** A PKCE pair. `verifier` never leaves this process except in the token request. */
export interface Pkce {
  /** 43 base64url characters (32 random bytes), within RFC 7636's 43–128 character range. */
  verifier: string;
  /** BASE64URL(SHA-256(verifier)) without padding (RFC 7636 §4.2, method S256). */
  challenge: string;
  method: "S256";
}

/** The S256 challenge of a verifier (RFC 7636 §4.2). */
export function challengeOf(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/** A fresh PKCE pair from the OS CSPRNG. */
export function createPkce(): Pkce {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: challengeOf(verifier), method: "S256" };
}

/** A fresh opaque `state` value: 32 random bytes, base64url (as the Codex CLI mints it). */
export function randomState(): string {
  return randomBytes(32).toString("base64url");
}
