/**
 * A quarantine lifted where this instance did not see it (SPEC 6.3 quarantine, D-2, 9.4): the re-read
 * that no longer holds an account's credential quarantined publishes `unquarantine` for it, so an
 * Accounts page open here drops the quarantine: "lifted elsewhere" when its fingerprint left the store,
 * "… the account's credential was replaced" when a new login or import replaced it (the old fingerprint
 * stays quarantined), and what happened here when this instance's own admin API lifted it (registry
 * `lift`). Until 2026-12-05 such a re-read published nothing.
 */
import { describe, expect, test } from "bun:test";
import { AccountRegistry } from "../../src/accounts/registry.ts";
import { EventBus, type GatewayEvent } from "../../src/events/bus.ts";
import { credentialFingerprint } from "../../src/store/secrets.ts";
import type { Account } from "../../pipeline/ports.ts";
import type { AccountState } from "../../src/store/types.ts";
import { account, providerOf, settableClock } from "./helpers.ts";

function rig() {
  const clock = settableClock();
  const bus = new EventBus();
  const events: GatewayEvent[] = [];
  bus.subscribe((e) => void events.push(e));
  const registry = new AccountRegistry(undefined, clock, { bus });
  const providers = new Map([["p", providerOf("p")]]);
  registry.setAccounts([account("a1"), account("a2")], providers);
  const changes = () =>
    events.filter((e) => e.type === "account_state" && (e.change === "quarantine" || e.change === "unquarantine")).map((e) => [(e as { account: string }).account, (e as { change: string }).change, (e as { reason?: string }).reason]);
  const quarantineOf = (a: Account) => ({ fingerprint: credentialFingerprint(a.credential)!, accountId: a.id, reason: "credential rejected after a refresh", since: clock.now() });
  return { clock, registry, providers, changes, quarantineOf };
}
const state = (quarantined: AccountState["quarantined"]): AccountState => ({ cooldowns: [], locks: [], removedModels: [], quarantined, circuits: [], quotas: [], bindings: [], discoveredModels: [] });

describe("a quarantine lifted elsewhere", () => {
  test("a re-read that no longer brings the fingerprint publishes unquarantine once, and the account serves again", () => {
    const { registry, changes, quarantineOf } = rig();
    const a1 = registry.list()[0]!;
    registry.loadState(state([quarantineOf(a1)]));
    expect(registry.exclusion(a1, "m")?.cause).toBe("quarantined");
    registry.loadState(state([]));
    registry.loadState(state([]));
    expect(changes()).toEqual([
      ["a1", "quarantine", "credential rejected after a refresh"],
      ["a1", "unquarantine", "quarantine (credential rejected after a refresh) lifted elsewhere"],
    ]);
    expect(registry.exclusion(a1, "m")).toBeUndefined();
    registry.close();
  });

  test("an account whose credential another instance replaced (a new login) is published as lifted, though the old fingerprint stays stored", () => {
    const { registry, providers, changes, quarantineOf } = rig();
    const q = quarantineOf(registry.list()[0]!);
    registry.loadState(state([q]));
    registry.setAccounts([account("a1", "p", { credential: { type: "api_key", apiKey: "sk-a1-new-login" } }), account("a2")], providers);
    registry.loadState(state([q]));
    expect(changes()).toEqual([
      ["a1", "quarantine", "credential rejected after a refresh"],
      ["a1", "unquarantine", "quarantine (credential rejected after a refresh) lifted elsewhere: the account's credential was replaced"],
    ]);
    registry.close();
  });

  test("a lift through this instance (a login or import here) says what happened here", async () => {
    const { registry, changes, quarantineOf } = rig();
    registry.loadState(state([quarantineOf(registry.list()[0]!)]));
    await registry.lift("a1", "cleared by a new login", async () => registry.loadState(state([])));
    expect(changes()).toEqual([
      ["a1", "quarantine", "credential rejected after a refresh"],
      ["a1", "unquarantine", "quarantine (credential rejected after a refresh) cleared by a new login"],
    ]);
    registry.close();
  });
});
