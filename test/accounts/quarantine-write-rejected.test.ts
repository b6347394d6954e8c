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
import { credentialFingerprint, sha256Hex } from "../../src/store/secrets.ts";
import type { Account } from "../../pipeline/ports.ts";

const clock = { now: () => 1_800_000_000_000, sleep: (ms: number) => Bun.sleep(ms) };

/** The line of a rejected quarantine. */
const LOST = "the store rejected a credential quarantine: it is lost (the store keeps no row of it, so neither this instance, which re-reads the state next, nor another holds the quarantine; counted in switchyard_store_dropped_total)";
/** The `error` lines among `lines`, as objects. */
const errorLines = (lines: string[]) => lines.map((l) => JSON.parse(l)).filter((l) => l.level === "error");

/** A credential manager whose store's `quarantine` is `quarantine`, its lines in `lines`, each lost write counted by `registry`. */
function managerWith(quarantine: (q: { fingerprint: string }) => Promise<void>, lines: string[], registry?: AccountRegistry): CredentialManager {
  return new CredentialManager({
    store: { updateCredential: () => {}, quarantine },
    clock,
    oauthOf: () => undefined,
    reload: () => {},
    log: (l) => void lines.push(l),
    onLostWrite: () => registry?.countLostStateWrite(),
  });
}

test("a rejected quarantine write: one error line without the token or fingerprint, counted as a lost state write", async () => {
  const account: Account = { id: "acct", providerId: "cc", priority: 0, disabled: false, source: "db", credential: { type: "oauth", accessToken: "at-secret-0", refreshToken: "rt-secret-0" } };
  const fp = credentialFingerprint(account.credential)!;
  const lines: string[] = [];
  const registry = new AccountRegistry(undefined, clock, { log: (l) => void lines.push(l) });
  const m = managerWith(async (q) => {
    throw new Error(`duplicate key value violates unique constraint "quarantine_pkey": Key (fingerprint)=(${q.fingerprint}) already exists.`);
  }, lines, registry);
  expect(registry.lostStateWrites).toBe(0);
  await m.quarantine(account, "refresh token rejected by the provider");
  expect(errorLines(lines)).toEqual([
    {
      level: "error",
      time: clock.now(),
      msg: LOST,
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

test("a refreshed credential held in memory while the store rejects writes: its quarantine and the account's own are rejected, one error line, counted once", async () => {
  const account: Account = { id: "acct", providerId: "cc", priority: 0, disabled: false, source: "config", credential: { type: "oauth", accessToken: "at-secret-0", refreshToken: "rt-secret-0" } };
  const refreshed = { type: "oauth" as const, accessToken: "at-secret-1", refreshToken: "rt-secret-1" };
  const lines: string[] = [];
  const tried: string[] = [];
  const registry = new AccountRegistry(undefined, clock, { log: (l) => void lines.push(l) });
  const m = managerWith(async (q) => {
    tried.push(q.fingerprint);
    throw new Error(`permission denied for table quarantined_credentials (${q.fingerprint})`);
  }, lines, registry);
  m.loadOverrides([{ accountId: "acct", baseFingerprint: sha256Hex("at-secret-0"), credential: refreshed }]);
  expect(m.current(account)).toEqual(refreshed);
  await m.quarantine(account, "refresh token rejected by the provider: invalid_grant");
  expect(tried).toEqual([credentialFingerprint(refreshed)!, credentialFingerprint(account.credential)!]); // both tried
  expect(errorLines(lines)).toEqual([
    {
      level: "error",
      time: clock.now(),
      msg: LOST,
      account: "acct",
      reason: "refresh token rejected by the provider: invalid_grant",
      error: "permission denied for table quarantined_credentials (…)",
    },
  ]);
  for (const fp of tried) expect(lines.join("\n")).not.toContain(fp);
  expect(lines.join("\n")).not.toContain("secret");
  expect(registry.lostStateWrites).toBe(1);
});

test("only the refreshed credential's quarantine rejected: the line names it and says the other one's was written", async () => {
  const account: Account = { id: "acct", providerId: "cc", priority: 0, disabled: false, source: "config", credential: { type: "oauth", accessToken: "at-secret-0", refreshToken: "rt-secret-0" } };
  const refreshed = { type: "oauth" as const, accessToken: "at-secret-1", refreshToken: "rt-secret-1" };
  const lines: string[] = [];
  let calls = 0;
  const m = managerWith(async () => {
    if (++calls === 1) throw new Error("canceling statement due to lock timeout");
  }, lines);
  m.loadOverrides([{ accountId: "acct", baseFingerprint: sha256Hex("at-secret-0"), credential: refreshed }]);
  await m.quarantine(account, "refresh token rejected by the provider: invalid_grant");
  expect(lines.map((l) => JSON.parse(l)).map((l) => [l.level, l.msg])).toEqual([
    ["error", "the store rejected the quarantine of the refreshed credential in use (the other one's was written): it is lost (the store keeps no row of it, so neither this instance, which re-reads the state next, nor another holds it; counted in switchyard_store_dropped_total)"],
    ["warn", "credential quarantined until a new login or import"],
  ]);
});
