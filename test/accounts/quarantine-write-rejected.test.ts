/**
 * A credential quarantine the store rejects (src/accounts/credentials.ts `quarantine`): one `error` log
 * line (the account, the reason and the store's message, never the token or its fingerprint) and the
 * write counted with the other lost state writes (src/accounts/registry.ts `lostStateWrites`, which
 * `switchyard_store_dropped_total` and the stop's count of unwritten state changes read). Until
 * 2026-12-07 an empty catch dropped it without a line.
 */
import { expect, test } from "bun:test";
import { CredentialManager } from "../../src/accounts/credentials.ts";
import { AccountRegistry } from "../../src/accounts/registry.ts";
import { credentialFingerprint } from "../../src/store/secrets.ts";
import type { Account } from "../../pipeline/ports.ts";

const clock = { now: () => 1_800_000_000_000, sleep: (ms: number) => Bun.sleep(ms) };

test("a rejected quarantine write: one error line without the token or fingerprint, counted as a lost state write", async () => {
  const account: Account = { id: "acct", providerId: "cc", priority: 0, disabled: false, source: "db", credential: { type: "oauth", accessToken: "at-secret-0", refreshToken: "rt-secret-0" } };
  const fp = credentialFingerprint(account.credential)!;
  const lines: string[] = [];
  const registry = new AccountRegistry(undefined, clock, { log: (l) => void lines.push(l) });
  const m = new CredentialManager({
    store: {
      updateCredential: () => {},
      quarantine: async (q) => {
        throw new Error(`duplicate key value violates unique constraint "quarantine_pkey": Key (fingerprint)=(${q.fingerprint}) already exists.`);
      },
    },
    clock,
    oauthOf: () => undefined,
    reload: () => {},
    log: (l) => void lines.push(l),
    onLostWrite: () => registry.countLostStateWrite(),
  });
  expect(registry.lostStateWrites).toBe(0);
  await m.quarantine(account, "refresh token rejected by the provider");
  const errors = lines.map((l) => JSON.parse(l)).filter((l) => l.level === "error");
  expect(errors).toEqual([
    {
      level: "error",
      time: clock.now(),
      msg: "the store rejected a credential quarantine: it is lost (the store keeps no row of it, so neither this instance, which re-reads the state next, nor another holds the quarantine; counted in switchyard_store_dropped_total)",
      account: "acct",
      reason: "refresh token rejected by the provider",
      error: 'duplicate key value violates unique constraint "quarantine_pkey": Key (fingerprint)=(…) already exists.',
    },
  ]);
  expect(lines.join("\n")).not.toContain("credential quarantined until"); // it was not
  expect(lines.join("\n")).not.toContain(fp);
  expect(lines.join("\n")).not.toContain("secret");
  expect(registry.lostStateWrites).toBe(1);
  expect(registry.retryWrites()).toBe(1); // the stop's count of state changes not written
});
