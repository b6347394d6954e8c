/**
 * Hashing and generation of secrets for the store: client-key secrets and credential fingerprints.
 * Nothing here logs or returns a secret except `generateKeySecret`, whose result is shown once.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Credential } from "../../pipeline/ports.ts";

/** Prefix of every generated client-key secret. */
export const KEY_SECRET_PREFIX = "sy-";

/** Longest prefix of a secret a key shows (`sy-` counted in): `sy-mHYRP`. */
export const KEY_PREFIX_LENGTH = 8;

/**
 * The non-secret prefix a key is recognised by (SPEC 9.4 "keys show a prefix only"; `keys list`, the
 * admin API, the Keys page): the secret's first {@link KEY_PREFIX_LENGTH} characters, `sy-` counted in
 * (`sy-mHYRP` of a generated key: 5 of its 43 random characters, 30 of 256 bits), and never more than a
 * quarter of the secret, so a short one (a config file's) keeps three quarters unseen; a secret shorter
 * than 16 characters has none (undefined), as 3 characters of 12 would tell too much.
 */
export function keyPrefix(secret: string): string | undefined {
  if (typeof secret !== "string" || secret.length < 16) return undefined;
  return secret.slice(0, Math.min(KEY_PREFIX_LENGTH, Math.floor(secret.length / 4)));
}

/**
 * A new client-key secret: `sy-` followed by 43 base64url characters encoding 32 random bytes
 * (256 bits from the OS CSPRNG), 46 characters in all.
 */
export function generateKeySecret(): string {
  return KEY_SECRET_PREFIX + randomBytes(32).toString("base64url");
}

/** SHA-256 of a UTF-8 string, as 32 raw bytes. */
export function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** SHA-256 of a UTF-8 string, as 64 lowercase hex characters. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Constant-time equality of two byte strings (false, without comparing, when lengths differ). */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The fingerprint a credential is quarantined by (SPEC 6.3, P-7): hex SHA-256 of the OAuth refresh
 * token (of the access token when there is no refresh token) or of the API key; undefined for
 * `type: "none"`. A new login yields a new fingerprint, which lifts the quarantine by itself.
 */
export function credentialFingerprint(credential: Credential): string | undefined {
  switch (credential.type) {
    case "api_key":
      return credential.apiKey ? sha256Hex(credential.apiKey) : undefined;
    case "oauth": {
      const token = credential.refreshToken || credential.accessToken;
      return token ? sha256Hex(token) : undefined;
    }
    default:
      return undefined;
  }
}
