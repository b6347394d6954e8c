/**
 * `switchyard import claude-code|codex` (SPEC P-9): reading the credential files the vendors' CLIs
 * keep on this machine, in the shapes those CLIs write. The files are only read, never modified.
 *
 * - Claude Code: `$CLAUDE_CONFIG_DIR/.credentials.json`, default `~/.claude/.credentials.json`:
 *   `{"claudeAiOauth": {"accessToken", "refreshToken", "expiresAt" (ms since the epoch), "scopes",
 *   "subscriptionType"}}` (observed on Linux; on macOS Claude Code keeps it in the Keychain instead).
 *   The login's e-mail address, when wanted for the account name, is `oauthAccount.emailAddress` of
 *   `~/.claude.json`.
 * - Codex: `$CODEX_HOME/auth.json`, default `~/.codex/auth.json`: `{"OPENAI_API_KEY": null,
 *   "tokens": {"id_token", "access_token", "refresh_token", "account_id"}, "last_refresh": ISO-8601}`
 *   (openai/codex codex-rs/login/src/auth/storage.rs). The access token is a JWT whose `exp` is its
 *   expiry.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import * as v from "valibot";
import type { Credential } from "../../pipeline/ports.ts";
import { codexIdentity, jwtClaims, type SubscriptionKind } from "./protocol.ts";

/** A credential read from a CLI's file. */
export interface ImportedCredential {
  kind: SubscriptionKind;
  credential: Extract<Credential, { type: "oauth" }>;
  /** The login's e-mail address when the files say (for a default account name). */
  email?: string;
  /** Claude `subscriptionType` (pro, max, …) or Codex plan type, for display. */
  plan?: string;
  /** The file read. */
  path: string;
}

/** The default credential file of each CLI (see the module comment). */
export function defaultCredentialPath(kind: SubscriptionKind, env: Record<string, string | undefined> = process.env): string {
  if (kind === "claude-code") return join(env.CLAUDE_CONFIG_DIR || join(homedir(), ".claude"), ".credentials.json");
  return join(env.CODEX_HOME || join(homedir(), ".codex"), "auth.json");
}

const ClaudeFile = v.looseObject({
  claudeAiOauth: v.looseObject({
    accessToken: v.pipe(v.string(), v.minLength(1, "claudeAiOauth.accessToken is empty")),
    refreshToken: v.optional(v.nullable(v.string())),
    expiresAt: v.optional(v.nullable(v.number())),
    scopes: v.optional(v.nullable(v.array(v.string()))),
    subscriptionType: v.optional(v.nullable(v.string())),
  }, "the file has no claudeAiOauth object (is this Claude Code's .credentials.json?)"),
});

const CodexFile = v.looseObject({
  tokens: v.looseObject({
    id_token: v.optional(v.nullable(v.union([v.string(), v.looseObject({ raw_jwt: v.optional(v.string()) })]))),
    access_token: v.pipe(v.string(), v.minLength(1, "tokens.access_token is empty")),
    refresh_token: v.optional(v.nullable(v.string())),
    account_id: v.optional(v.nullable(v.string())),
  }, "the file has no tokens object (logged in with an API key instead of ChatGPT?)"),
  last_refresh: v.optional(v.nullable(v.string())),
});

/**
 * Reads and validates a CLI credential file. @throws Error naming the file and what is wrong
 * (never quoting a token).
 */
export function readCredentialFile(kind: SubscriptionKind, path: string): ImportedCredential {
  if (!existsSync(path)) {
    const cli = kind === "claude-code" ? "Claude Code (`claude`, then /login)" : "Codex (`codex login`)";
    const mac = kind === "claude-code" ? "; on macOS Claude Code keeps its login in the Keychain, not in a file" : "";
    throw new Error(`${path} does not exist: log in with ${cli} on this machine first, name its file with --from PATH, or log in through switchyard with \`switchyard login ${kind}\`${mac}`);
  }
  if (statSync(path).isDirectory()) throw new Error(`${path} is a directory: name the credential file itself (${kind === "claude-code" ? ".credentials.json" : "auth.json"})`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw new Error(`${path} is not valid JSON`);
  }
  return parseCredentialJson(kind, json, path);
}

/**
 * What to say when the file lacks the login object of `kind` (the usual mistake: the other CLI's
 * file), where valibot says "Invalid key: Expected … but received undefined"; undefined when it has it.
 */
function missingLogin(kind: SubscriptionKind, json: unknown): string | undefined {
  const o = json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  const [key, other] = kind === "claude-code" ? ["claudeAiOauth", "tokens"] : ["tokens", "claudeAiOauth"];
  if (o[key] !== undefined) return undefined;
  if (o[other] !== undefined) {
    const [its, cmd] = kind === "claude-code" ? ["a Codex login (auth.json)", "switchyard import codex"] : ["a Claude Code login (.credentials.json)", "switchyard import claude-code"];
    return `the file is ${its}, not a ${kind} one: import it with \`${cmd}\` (to a provider of that kind)`;
  }
  return kind === "claude-code"
    ? "the file has no claudeAiOauth object (is this Claude Code's .credentials.json?)"
    : "the file has no tokens object (logged in with an API key instead of ChatGPT?)";
}

/** Validates the parsed JSON of a CLI credential file (see {@link readCredentialFile}). */
export function parseCredentialJson(kind: SubscriptionKind, json: unknown, path = "(input)"): ImportedCredential {
  const missing = missingLogin(kind, json);
  if (missing) throw new Error(`${path}: ${missing}`);
  if (kind === "claude-code") {
    const r = v.safeParse(ClaudeFile, json);
    if (!r.success) throw new Error(`${path}: ${issue(r.issues)}`);
    const o = r.output.claudeAiOauth;
    const credential: ImportedCredential["credential"] = { type: "oauth", accessToken: o.accessToken };
    if (o.refreshToken) credential.refreshToken = o.refreshToken;
    if (typeof o.expiresAt === "number" && Number.isFinite(o.expiresAt)) credential.expiresAt = o.expiresAt < 1e12 ? o.expiresAt * 1000 : o.expiresAt;
    const out: ImportedCredential = { kind, credential, path };
    if (o.subscriptionType) out.plan = o.subscriptionType;
    const email = claudeEmail(path);
    if (email) out.email = email;
    return out;
  }
  const r = v.safeParse(CodexFile, json);
  if (!r.success) throw new Error(`${path}: ${issue(r.issues)}`);
  const t = r.output.tokens;
  const idToken = typeof t.id_token === "string" ? t.id_token : t.id_token?.raw_jwt;
  const credential: ImportedCredential["credential"] = { type: "oauth", accessToken: t.access_token };
  if (t.refresh_token) credential.refreshToken = t.refresh_token;
  const exp = jwtClaims(t.access_token)?.exp;
  if (typeof exp === "number") credential.expiresAt = exp * 1000;
  const id = codexIdentity(idToken, t.access_token);
  const accountId = t.account_id || id.accountId;
  if (accountId) credential.accountId = accountId;
  const out: ImportedCredential = { kind, credential, path };
  if (id.email) out.email = id.email;
  const auth = jwtClaims(idToken)?.["https://api.openai.com/auth"] as Record<string, unknown> | undefined;
  if (auth && typeof auth.chatgpt_plan_type === "string") out.plan = auth.chatgpt_plan_type;
  return out;
}

/** `oauthAccount.emailAddress` of the `.claude.json` next to the credentials' directory, if readable. */
function claudeEmail(credentialsPath: string): string | undefined {
  const candidates = [join(dirname(dirname(credentialsPath)), ".claude.json"), join(dirname(credentialsPath), ".claude.json")];
  for (const p of candidates) {
    try {
      if (!existsSync(p)) continue;
      const j = JSON.parse(readFileSync(p, "utf8")) as { oauthAccount?: { emailAddress?: unknown } };
      if (typeof j.oauthAccount?.emailAddress === "string") return j.oauthAccount.emailAddress;
    } catch {
      // unreadable: no name hint
    }
  }
  return undefined;
}

function issue(issues: readonly v.BaseIssue<unknown>[]): string {
  const i = issues[0];
  const path = v.getDotPath(i);
  return `${path ? `${path}: ` : ""}${i.message}`;
}
