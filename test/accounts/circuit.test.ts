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
import { account, providerOf, recordingStore, settableClock } from "./helpers.ts";

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
});
