/**
 * A provider circuit across a configuration re-read (SPEC 6.3, 2.3 hot reload) through the real gateway:
 * `POST /admin/api/config/reload` re-reads the file and, with it, the store's account state. A circuit
 * keeps its state (open, half-open) through it unless the provider itself changed (its base_url or
 * kind): then it starts closed. Until 2026-12-05 a half-open circuit was closed by the re-read (the store
 * keeps no circuit past its open period) while an open one survived it, and an open circuit stayed open
 * after its provider was pointed at another upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { realClock } from "../../src/clock.ts";
import type { Clock } from "../../pipeline/ports.ts";
import type { GatewayEvent } from "../../src/events/bus.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import type { FakeReply } from "../support/fake-upstream.ts";

/** SPEC 6.3: 10 consecutive 5xx open the circuit for 5 minutes (the SPEC's literals). */
const THRESHOLD = 10;
const OPEN_MS = 5 * 60_000;

const yaml = (fake: string, rPath: string, alias = "") => `
providers:
  - id: r
    kind: anthropic
    base_url: "${fake}${rPath}"
accounts:
${Array.from({ length: THRESHOLD }, (_, i) => `  - { id: r${i + 1}, provider: r, api_key: env:FAKE_KEY }`).join("\n")}
${alias}`;

/** The real clock, moved forward by `shift` (ms) when the test says so. */
const clock: Clock & { shift: number } = { shift: 0, now: () => Date.now() + clock.shift, sleep: realClock.sleep };
let gw: TestGateway;
const events: GatewayEvent[] = [];

beforeAll(async () => {
  gw = await startGateway(yaml("{{FAKE}}", "/r"), { clock });
  gw.app.bus.subscribe((e) => void events.push(e));
});
afterAll(async () => {
  await gw?.stop();
});

const ask = async () => {
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "r/claude-x", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.arrayBuffer();
  return res.status;
};
const circuit = async () => {
  const res = await fetch(`${gw.url}/admin/api/providers`, { headers: { authorization: `Bearer ${gw.app.adminToken}` } });
  return ((await res.json()) as { providers: { id: string; circuit: { state: string } }[] }).providers.find((p) => p.id === "r")!.circuit.state;
};
/** Writes the file and re-reads it as `switchyard reload` does; waits for the store re-read that follows. */
const reload = async (text: string) => {
  writeFileSync(gw.configPath, text);
  const res = await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${gw.app.adminToken}` } });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  // The re-read of the store the reload starts (not awaited by it): the embedded store answers in well under this.
  await Bun.sleep(500);
};
const e500: FakeReply = { status: 500, json: { type: "error", error: { type: "api_error", message: "boom" } } };

describe("a provider circuit across a configuration re-read", () => {
  test("open and half-open circuits keep their state through a reload that leaves the provider as it was", async () => {
    // Each 500 cools its account down and the request moves on to the next (SPEC 6.3): ten accounts, ten 5xx in a row.
    gw.fake.enqueue(...Array(THRESHOLD).fill(e500));
    for (let i = 0; i < 3 && (await circuit()) !== "open"; i++) expect([500, 503]).toContain(await ask());
    expect(gw.fake.requests).toHaveLength(THRESHOLD);
    expect(await circuit()).toBe("open");
    await reload(yaml(gw.fake.url, "/r", "aliases:\n  quick: r/claude-x\n"));
    expect(await circuit()).toBe("open");

    clock.shift = OPEN_MS + 1000;
    expect(await circuit()).toBe("half-open");
    // The embedded store reads the real clock, not the test's: its copy of the circuit gets a real end
    // that has passed, as the open period's end would have (it then keeps no circuit, as after 5 minutes).
    await gw.app.store.setCircuit({ providerId: "r", openUntil: Date.now() + 100, reason: "10 consecutive 5xx", since: Date.now() });
    await Bun.sleep(200);
    await reload(yaml(gw.fake.url, "/r"));
    expect(await circuit()).toBe("half-open");
    expect(events.filter((e) => e.type === "account_state" && e.change === "circuit_closed")).toEqual([]);

    // Its probe still decides: a failed one opens it again (the probe request tries up to max_attempts, 8, accounts).
    gw.fake.enqueue(...Array(8).fill(e500));
    expect(await ask()).toBe(500);
    expect(await circuit()).toBe("open");
  }, 30_000);

  test("a reload that points the provider at another base_url starts its circuit closed; the next request goes to the new upstream", async () => {
    expect(await circuit()).toBe("open");
    const before = gw.fake.requests.length;
    await reload(yaml(gw.fake.url, "/r2"));
    expect(await circuit()).toBe("closed");
    const closed = events.filter((e) => e.type === "account_state" && e.change === "circuit_closed");
    // once per account of the provider, as every circuit change
    expect(closed).toHaveLength(THRESHOLD);
    expect([...new Set(closed.map((e) => (e as { reason?: string }).reason))]).toEqual(["circuit (10 consecutive 5xx) closed: the provider's base_url changed"]);
    expect(await ask()).toBe(200);
    expect(gw.fake.requests.slice(before).map((r) => r.path)).toEqual(["/r2/v1/messages"]);
  }, 30_000);
});
