/**
 * A cooldown or lock another instance on the same store clears (a success there, a new login or import
 * through its admin API) reaches this instance by the re-read its announcement triggers (SPEC D-2); that
 * re-read dropped it without a word, so an Accounts page open here kept showing it. It is published as
 * `account_state` `cooldown_end` / `unlock` ("… cleared elsewhere"), once; a cooldown or lock still
 * stored, or one whose end passed on the clock (published as ended), is not.
 */
import { describe, expect, test } from "bun:test";
import { AccountRegistry } from "../../src/accounts/registry.ts";
import { EventBus, type GatewayEvent } from "../../src/events/bus.ts";
import type { AccountState } from "../../src/store/types.ts";
import { account, providerOf, settableClock } from "./helpers.ts";

const p = providerOf("p");

function rig() {
  const clock = settableClock();
  const bus = new EventBus();
  const events: GatewayEvent[] = [];
  bus.subscribe((e) => void events.push(e));
  const registry = new AccountRegistry(undefined, clock, { bus });
  registry.setAccounts([account("a1"), account("a2")], new Map([["p", p]]));
  const changes = () => events.filter((e) => e.type === "account_state" && (e.change === "cooldown_end" || e.change === "unlock"));
  return { clock, registry, changes };
}

const state = (s: Partial<AccountState>): AccountState => ({ cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [], ...s });

describe("a cooldown or lock cleared elsewhere", () => {
  test("is published at the re-read that drops it, once; what is still stored is not", () => {
    const { clock, registry, changes } = rig();
    const t0 = clock.now();
    const cool = (accountId: string, model: string) => ({ accountId, model, until: t0 + 60_000, reason: "429 rate limited", level: 1, since: t0 });
    const lock = { accountId: "a1", until: null, reason: "401 invalid credential", since: t0 };
    registry.loadState(state({ cooldowns: [cool("a1", "m1"), cool("a2", "*")], locks: [lock] }));
    expect(changes()).toEqual([]);
    clock.advance(1000);
    // Another instance cleared a1's cooldown and lock; a2's cooldown is still stored.
    registry.loadState(state({ cooldowns: [cool("a2", "*")] }));
    registry.loadState(state({ cooldowns: [cool("a2", "*")] }));
    const at = clock.now();
    expect(changes()).toEqual([
      { type: "account_state", at, account: "a1", provider: "p", change: "cooldown_end", model: "m1", reason: "cooldown (429 rate limited) cleared elsewhere" },
      { type: "account_state", at, account: "a1", provider: "p", change: "unlock", reason: "lock (401 invalid credential) cleared elsewhere" },
    ]);
    registry.close();
  });

  test("a cooldown whose end passed on the clock is published as ended, not as cleared elsewhere", () => {
    const { clock, registry, changes } = rig();
    const t0 = clock.now();
    registry.loadState(state({ cooldowns: [{ accountId: "a1", model: "m1", until: t0 + 5000, reason: "429 rate limited", level: 1, since: t0 }] }));
    clock.advance(6000);
    registry.loadState(state({}));
    expect(changes().map((e) => (e as { reason?: string }).reason)).toEqual(["cooldown (429 rate limited) ended"]);
    registry.close();
  });
});

describe("a cooldown or lock cleared through this instance (registry lift)", () => {
  test("a re-read that drops it while the clear is under way leaves it to the clear, announced once with its own reason", async () => {
    const { clock, registry, changes } = rig();
    const t0 = clock.now();
    registry.loadState(state({
      cooldowns: [{ accountId: "a1", model: "m1", until: t0 + 60_000, reason: "429 rate limited", level: 1, since: t0 }],
      locks: [{ accountId: "a1", until: null, reason: "401 invalid credential", since: t0 }, { accountId: "a2", until: null, reason: "401 invalid credential", since: t0 }],
    }));
    await registry.lift("a1", "cleared by a new login", async () => {
      // A periodic re-read lands after the store's write: a1's state is gone, and so is a2's lock (another instance).
      registry.loadState(state({}));
      // the clear's own re-read
      registry.loadState(state({}));
    });
    const at = clock.now();
    expect(changes()).toEqual([
      { type: "account_state", at, account: "a2", provider: "p", change: "unlock", reason: "lock (401 invalid credential) cleared elsewhere" },
      { type: "account_state", at, account: "a1", provider: "p", change: "cooldown_end", model: "m1", reason: "cooldown (429 rate limited) cleared by a new login" },
      { type: "account_state", at, account: "a1", provider: "p", change: "unlock", reason: "lock (401 invalid credential) cleared by a new login" },
    ]);
    registry.close();
  });
});
