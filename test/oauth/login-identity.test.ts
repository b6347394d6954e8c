/**
 * src/oauth/login-identity.ts `sameLogin`: whether another credential given to a subscription account is
 * the same login (its quota windows then stay, test/oauth/relogin-quota.test.ts): by the refresh token,
 * else by the identity both carry (Codex account id, e-mail, the access token's subject).
 */
import { expect, test } from "bun:test";
import type { Credential } from "../../pipeline/ports.ts";
import { sameLogin } from "../../src/oauth/login-identity.ts";

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
const jwt = (claims: object) => `${b64({ alg: "none" })}.${b64(claims)}.sig`;
const oauth = (refreshToken: string, extra: Partial<Extract<Credential, { type: "oauth" }>> = {}): Credential => ({ type: "oauth", accessToken: `at-${refreshToken}`, refreshToken, ...extra });

test("the same refresh token is the same login; another one is not unless an identity both carry says so", () => {
  expect(sameLogin(oauth("rt-1"), oauth("rt-1"))).toBe(true);
  expect(sameLogin(oauth("rt-1"), oauth("rt-2"))).toBe(false); // nothing else tells
  expect(sameLogin(oauth("rt-1", { email: "A@Example.test" }), oauth("rt-2", { email: "a@example.test" }))).toBe(true);
  expect(sameLogin(oauth("rt-1", { email: "a@example.test" }), oauth("rt-2", { email: "b@example.test" }))).toBe(false);
  expect(sameLogin(oauth("rt-1", { email: "a@example.test" }), oauth("rt-2"))).toBe(false); // one side names no e-mail: taken as another login
});

test("Codex: the account id, the e-mail and the token's subject each decide only where both carry them, and all must agree", () => {
  const codex = (rt: string, accountId: string, email: string, sub: string): Credential => ({ type: "oauth", refreshToken: rt, accessToken: jwt({ sub, "https://api.openai.com/auth": { chatgpt_account_id: accountId } }), accountId, email });
  expect(sameLogin(codex("rt-1", "acct-1", "a@example.test", "user-1"), codex("rt-2", "acct-1", "a@example.test", "user-1"))).toBe(true);
  expect(sameLogin(codex("rt-1", "acct-1", "a@example.test", "user-1"), codex("rt-2", "acct-1", "b@example.test", "user-2"))).toBe(false); // a team workspace's other member
  expect(sameLogin(codex("rt-1", "acct-1", "a@example.test", "user-1"), codex("rt-2", "acct-2", "a@example.test", "user-1"))).toBe(false); // the same person's other workspace
  const noEmail: Credential = { type: "oauth", refreshToken: "rt-3", accessToken: jwt({ sub: "user-1" }), accountId: "acct-1" };
  expect(sameLogin(codex("rt-1", "acct-1", "a@example.test", "user-1"), noEmail)).toBe(true); // what both carry agrees
});

test("API keys: the same key only", () => {
  expect(sameLogin({ type: "api_key", apiKey: "sk-one-key-000" }, { type: "api_key", apiKey: "sk-one-key-000" })).toBe(true);
  expect(sameLogin({ type: "api_key", apiKey: "sk-one-key-000" }, { type: "api_key", apiKey: "sk-two-key-000" })).toBe(false);
  expect(sameLogin({ type: "api_key", apiKey: "sk-one-key-000" }, oauth("sk-one-key-000"))).toBe(false);
});
