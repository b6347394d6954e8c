/**
 * The provider circuit (SPEC 6.3): 10 consecutive 5xx open it for 5 minutes; then it is half-open and
 * lets exactly one probe through; the probe's success closes it, its failure opens it again. Written
 * through to the store.
 */
import { describe, expect, test } from "bun:test";
import { AccountRegistry } from "../../src/accounts/registry.ts";

/** SPEC 6.3: 10 consecutive 5xx open the circuit for 5 min (literals from the SPEC, not the code's constants). */
const CIRCUIT_THRESHOLD = 10;
const CIRCUIT_OPEN_MS = 5 * 60_000;
import { classify } from "../../pipeline/classify.ts";
import { EventBus, type GatewayEvent } from "../../src/events/bus.ts";
import type { AccountState, Store } from "../../src/store/types.ts";
import { account, providerOf, recordingStore, settableClock } from "./helpers.ts";
import { accountsStatus } from "../../src/accounts/status.ts";

function rig() {
  const clock = settableClock();
  const { store, calls } = recordingStore();
  const registry = new AccountRegistry(store, clock);
  const p = providerOf("p");
  registry.setAccounts([account("a1"), account("a2")], new Map([["p", p]]));
  const fail5xx = (id = "a1") => registry.failure(registry.list().find((a) => a.id === id)!, p, "m", classify({ status: 500, now: clock.now() }));
  return { clock, calls, registry, p, fail5xx };
}

describe("provider circuit", () => {
  test("opens after exactly 10 consecutive 5xx; a success in between resets the count", () => {
    const { registry, p, fail5xx, calls } = rig();
    for (let i = 0; i < CIRCUIT_THRESHOLD - 1; i++) fail5xx(i % 2 ? "a1" : "a2");
    expect(registry.circuitOpen("p")).toBe(false);
    registry.success(registry.list()[0], p, "m", 10);
    for (let i = 0; i < CIRCUIT_THRESHOLD - 1; i++) fail5xx();
    expect(registry.circuitOpen("p")).toBe(false);
    fail5xx();
    expect(registry.circuitOpen("p")).toBe(true);
    expect(calls.filter((c) => c.method === "setCircuit")).toHaveLength(1);
  });

  test("half-open after 5 minutes: one probe passes; success closes, failure reopens for another 5 minutes", () => {
    const { registry, p, fail5xx, clock } = rig();
    for (let i = 0; i < CIRCUIT_THRESHOLD; i++) fail5xx();
    clock.advance(CIRCUIT_OPEN_MS - 1);
    expect(registry.circuitOpen("p")).toBe(true);
    clock.advance(2);
    expect(registry.circuitOpen("p")).toBe(false); // the probe
    expect(registry.circuitOpen("p")).toBe(true); // everyone else waits for it
    fail5xx(); // the probe failed
    expect(registry.circuitOpen("p")).toBe(true);
    clock.advance(CIRCUIT_OPEN_MS + 1);
    expect(registry.circuitOpen("p")).toBe(false); // next probe
    registry.success(registry.list()[0], p, "m", 10);
    expect(registry.circuitOpen("p")).toBe(false);
    expect(registry.circuitOpen("p")).toBe(false);
  });

  test("accounts status: while the circuit is open no account or model of the provider is eligible, and each says until when", () => {
    const { registry, fail5xx, clock } = rig();
    registry.setAccounts([account("a1", "p", { models: ["m", "n"] }), account("a2")], new Map([["p", providerOf("p")]]));
    for (let i = 0; i < CIRCUIT_THRESHOLD; i++) fail5xx("a2");
    const until = new Date(clock.now() + CIRCUIT_OPEN_MS).toISOString();
    const a1 = accountsStatus(registry, "scored").accounts.find((a) => a.id === "a1")!;
    const why = `provider p circuit open (consecutive upstream 5xx) until ${until}`;
    expect({ eligible: a1.eligible, reasons: a1.reasons, models: a1.models }).toEqual({
      eligible: false,
      reasons: [why],
      models: [
        { model: "m", eligible: false, reason: why, until: clock.now() + CIRCUIT_OPEN_MS },
        { model: "n", eligible: false, reason: why, until: clock.now() + CIRCUIT_OPEN_MS },
      ],
    });
    expect(registry.circuitOpenUntil("p")).toBe(clock.now() + CIRCUIT_OPEN_MS);
    clock.advance(CIRCUIT_OPEN_MS + 1); // half-open: the next request is the probe
    expect(accountsStatus(registry, "scored").accounts.find((a) => a.id === "a1")!.eligible).toBe(true);
  });
});

describe("a provider circuit closed elsewhere (SPEC D-2, 9.4)", () => {
  function heard() {
    const clock = settableClock();
    const bus = new EventBus();
    const events: GatewayEvent[] = [];
    bus.subscribe((e) => void events.push(e));
    const registry = new AccountRegistry(undefined, clock, { bus });
    registry.setAccounts([account("a1"), account("a2")], new Map([["p", providerOf("p")], ["q", providerOf("q")]]));
    const closed = () => events.filter((e) => e.type === "account_state" && e.change === "circuit_closed").map((e) => [(e as { account: string }).account, (e as { reason?: string }).reason]);
    return { clock, registry, closed, events };
  }
  const state = (circuits: AccountState["circuits"]): AccountState => ({ cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits, quotas: [], bindings: [], discoveredModels: [] });

  test("a circuit still open here that a re-read no longer brings is published as circuit_closed, once per account; one still stored is not", () => {
    const { clock, registry, closed } = heard();
    const t0 = clock.now();
    const open = (providerId: string) => ({ providerId, openUntil: t0 + CIRCUIT_OPEN_MS, reason: "10 consecutive 5xx", since: t0 });
    registry.loadState(state([open("p"), open("q")]));
    expect(registry.circuitState("p").state).toBe("open");
    clock.advance(1000);
    registry.loadState(state([open("q")]));
    registry.loadState(state([open("q")]));
    expect(closed()).toEqual([
      ["a1", "circuit (10 consecutive 5xx) closed elsewhere"],
      ["a2", "circuit (10 consecutive 5xx) closed elsewhere"],
    ]);
    expect([registry.circuitState("p").state, registry.circuitState("q").state]).toEqual(["closed", "open"]);
    registry.close();
  });

  test("a half-open circuit the re-read no longer brings (the store keeps none past its open period) stays half-open, its probe free again", () => {
    const { clock, registry, closed } = heard();
    const t0 = clock.now();
    registry.loadState(state([{ providerId: "p", openUntil: t0 + CIRCUIT_OPEN_MS, reason: "10 consecutive 5xx", since: t0 }]));
    clock.advance(CIRCUIT_OPEN_MS + 1000);
    expect(registry.circuitOpen("p")).toBe(false); // the probe goes out…
    expect(registry.circuitOpen("p")).toBe(true); // …and everyone else waits for it
    registry.loadState(state([]));
    expect(closed()).toEqual([]);
    expect(registry.circuitState("p").state).toBe("half-open");
    // A probe whose request ended without a verdict (a 4xx, the client gone) no longer holds the provider back.
    expect(registry.circuitOpen("p")).toBe(false);
    expect(registry.circuitOpen("p")).toBe(true);
    registry.close();
  });

  test("a circuit a re-read brings that is not open here was opened elsewhere: circuit_open once per account, with its end; not at the first load", () => {
    const { clock, registry, events } = heard();
    const t0 = clock.now();
    const stored = (providerId: string, at: number) => ({ providerId, openUntil: at + CIRCUIT_OPEN_MS, reason: "10 consecutive 5xx", since: at });
    registry.loadState(state([stored("q", t0)])); // the first load (at start): no change
    clock.advance(1000);
    registry.loadState(state([stored("q", t0), stored("p", t0 + 1000)]));
    registry.loadState(state([stored("q", t0), stored("p", t0 + 1000)]));
    const opened = () => events.filter((e) => e.type === "account_state" && e.change === "circuit_open").map((e) => [(e as { account: string }).account, (e as { reason?: string }).reason, (e as { until?: number }).until]);
    expect(opened()).toEqual([
      ["a1", "circuit (10 consecutive 5xx) opened elsewhere", t0 + 1000 + CIRCUIT_OPEN_MS],
      ["a2", "circuit (10 consecutive 5xx) opened elsewhere", t0 + 1000 + CIRCUIT_OPEN_MS],
    ]);
    expect(registry.circuitState("p").state).toBe("open");
    // Half-open here, then opened again elsewhere (its probe failed there): published again.
    clock.advance(CIRCUIT_OPEN_MS + 1000);
    registry.loadState(state([stored("p", clock.now())]));
    expect(opened()).toHaveLength(4);
    registry.close();
  });

  test("a provider whose base_url or kind changed starts closed: its circuit is dropped (and not taken back from the store), its count restarts", () => {
    const { clock, registry, closed } = heard();
    const t0 = clock.now();
    const before = new Map([["p", providerOf("p")], ["q", providerOf("q")]]);
    registry.loadState(state([{ providerId: "p", openUntil: t0 + CIRCUIT_OPEN_MS, reason: "10 consecutive 5xx", since: t0 }, { providerId: "q", openUntil: t0 + CIRCUIT_OPEN_MS, reason: "10 consecutive 5xx", since: t0 }]));
    clock.advance(1000);
    registry.setAccounts(registry.list(), new Map([["p", { ...before.get("p")!, baseUrl: "http://127.0.0.1:9/elsewhere" }], ["q", before.get("q")!]]));
    expect([registry.circuitState("p").state, registry.circuitState("q").state]).toEqual(["closed", "open"]);
    expect(closed()).toEqual([
      ["a1", "circuit (10 consecutive 5xx) closed: the provider's base_url changed"],
      ["a2", "circuit (10 consecutive 5xx) closed: the provider's base_url changed"],
    ]);
    // The store's copy, opened before the change, is not taken back by the next re-read.
    registry.loadState(state([{ providerId: "p", openUntil: t0 + CIRCUIT_OPEN_MS, reason: "10 consecutive 5xx", since: t0 }, { providerId: "q", openUntil: t0 + CIRCUIT_OPEN_MS, reason: "10 consecutive 5xx", since: t0 }]));
    expect([registry.circuitState("p").state, registry.circuitState("q").state]).toEqual(["closed", "open"]);
    registry.close();
  });
});

describe("a provider circuit closed by hand on a shared store (close-circuit)", () => {
  /** A registry whose store's clearCircuit waits for `release` (then resolves or rejects with `refusal`). */
  function rig() {
    const clock = settableClock();
    const bus = new EventBus();
    const events: GatewayEvent[] = [];
    bus.subscribe((e) => void events.push(e));
    let release = () => {};
    let refusal: Error | undefined;
    const clearCircuit = () => new Promise<void>((resolve, reject) => void (release = () => (refusal ? reject(refusal) : resolve())));
    const store = new Proxy({}, { get: (_t, m) => (m === "clearCircuit" ? clearCircuit : () => undefined) }) as Store;
    const registry = new AccountRegistry(store, clock, { bus });
    registry.setAccounts([account("a1")], new Map([["p", providerOf("p")]]));
    const t0 = clock.now();
    const stored = { providerId: "p", openUntil: t0 + CIRCUIT_OPEN_MS, reason: "10 consecutive 5xx", since: t0 };
    registry.loadState(state([]));
    clock.advance(1000);
    registry.loadState(state([stored])); // opened elsewhere
    const closed = () => events.filter((e) => e.type === "account_state" && e.change === "circuit_closed").map((e) => (e as { reason?: string }).reason);
    return { registry, closed, stored, release: () => release(), refuse: (e: Error) => void (refusal = e) };
  }
  const state = (circuits: AccountState["circuits"]): AccountState => ({ cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits, quotas: [], bindings: [], discoveredModels: [] });

  test("a close the database refuses (P0001) leaves the circuit open here, as in the database, publishes nothing, and throws StoreError rejected", async () => {
    const { registry, closed, release, refuse, stored } = rig();
    expect(registry.circuitState("p").state).toBe("open");
    refuse(Object.assign(new Error("circuits close by themselves"), { errno: "P0001" }));
    const closing = registry.closeCircuit("p");
    release();
    await expect(closing).rejects.toMatchObject({ code: "rejected", message: expect.stringContaining("SQLSTATE P0001: circuits close by themselves") });
    expect(registry.circuitState("p").state).toBe("open");
    expect(closed()).toEqual([]);
    registry.loadState(state([stored])); // the next re-read: still open, nothing said
    expect(registry.circuitState("p").state).toBe("open");
    expect(closed()).toEqual([]);
    registry.close();
  });

  test("a re-read while the close is being written (the row already gone) says nothing; the close is then published as by hand and answers the circuit as it was", async () => {
    const { registry, closed, release } = rig();
    const closing = registry.closeCircuit("p");
    registry.loadState(state([]));
    expect(closed()).toEqual([]);
    release();
    expect(await closing).toMatchObject({ state: "open", reason: "10 consecutive 5xx" });
    expect(closed()).toEqual(["circuit (10 consecutive 5xx) closed by hand"]);
    expect(registry.circuitState("p").state).toBe("closed");
    registry.close();
  });
});
