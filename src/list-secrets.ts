/**
 * Lists every secret an instance holds — account credentials (a refreshed OAuth token too), the
 * configuration's client keys, the admin token — for what must never show them: log lines, traces,
 * recordings, alerts, error texts. Built once and kept until the account list (a store re-read, a
 * config reload), the config's keys or a refreshed credential changes.
 */
import type { Account } from "../pipeline/ports.ts";
import type { CredentialManager } from "./accounts/credentials.ts";
import type { AccountRegistry } from "./accounts/registry.ts";
import type { RuntimeConfig } from "./config/types.ts";

/** Where the secrets are read from. */
export interface SecretSources {
  registry: Pick<AccountRegistry, "list">;
  credentials: Pick<CredentialManager, "current" | "version">;
  /** The running configuration's client keys. */
  keys: () => RuntimeConfig["keys"];
  adminToken: () => string;
}

/** The list of secrets (see the module comment): the same array until one of its sources changes. */
export function listSecrets(s: SecretSources): () => string[] {
  const { registry, credentials, keys, adminToken } = s;
  let secretsMemo: { accounts: readonly Account[]; keys: RuntimeConfig["keys"]; credentials: number; list: string[] } | undefined;
  return (): string[] => {
    const accounts = registry.list();
    const m = secretsMemo;
    if (m && m.accounts === accounts && m.keys === keys() && m.credentials === credentials.version) return m.list;
    const out: string[] = [];
    for (const a of accounts) {
      const c = a.credential;
      if (c.type === "api_key") out.push(c.apiKey);
      else if (c.type === "oauth") out.push(c.accessToken, ...(c.refreshToken ? [c.refreshToken] : []));
      const cur = credentials.current(a);
      if (cur !== c && cur.type === "oauth") out.push(cur.accessToken, ...(cur.refreshToken ? [cur.refreshToken] : []));
    }
    for (const k of keys()) out.push(k.secret);
    out.push(adminToken());
    secretsMemo = { accounts, keys: keys(), credentials: credentials.version, list: out };
    return out;
  };
}
