/**
 * `/metrics` counts what the alert webhook did (SPEC O-3, 9.7): `switchyard_alert_deliveries_total` by
 * event and result, scraped from the real gateway after three alerts to a local receiver: one it
 * accepts, one it refuses with a 503 once and then accepts (one retry), one it refuses with a 400 (not
 * retried: dropped). Before, no series said whether alerts reached the receiver at all.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import type { AlertEvent } from "../../src/events/bus.ts";
import { webhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";

/** Waits for `cond` (the test's own timeout bounds the wait: the first alert loads Effect). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await Bun.sleep(10);
}

/** The `switchyard_alert_deliveries_total` samples of a scrape, as `event/result` → value. */
function deliveries(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^switchyard_alert_deliveries_total\{event="([^"]+)",result="([^"]+)"\} (\S+)$/gm)) out[`${m[1]}/${m[2]}`] = Number(m[3]);
  return out;
}

describe("alert deliveries in /metrics", () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver | undefined;
  const hits: Record<string, number> = {};
  beforeAll(async () => {
    receiver = webhookReceiver<{ event: string }>({
      answer: ({ event }) => {
        hits[event] = (hits[event] ?? 0) + 1;
        if (event === "circuit_open" && hits[event] === 1) return 503;
        if (event === "account_quarantined") return 400;
        return 204;
      },
    });
    gw = await startGateway(`${DEFAULT_YAML}
settings:
  alerts: { webhook: env:HOOK }
`, { env: { HOOK: receiver.url } });
  });
  afterAll(async () => {
    await gw?.stop();
    receiver?.stop();
  });

  test("delivered, retried then delivered, and refused (dropped): each counted by event and result", async () => {
    const scrape = async () => {
      const res = await fetch(`${gw.url}/metrics`);
      expect(res.status).toBe(200);
      return res.text();
    };
    const before = await scrape();
    expect(before).toContain("# TYPE switchyard_alert_deliveries_total counter");
    expect(deliveries(before)).toEqual({});

    const alert = (event: string, subject: string): AlertEvent => ({ type: "alert", event, at: Date.now(), subject, detail: {} });
    gw.app.bus.publish(alert("account_locked", "account:a"));
    gw.app.bus.publish(alert("circuit_open", "provider:p"));
    gw.app.bus.publish(alert("account_quarantined", "account:b"));
    // every delivery has ended: two accepted, one refused
    await until(() => gw.app.webhook.delivered === 2 && gw.app.webhook.dropped === 1);
    expect(hits).toEqual({ account_locked: 1, circuit_open: 2, account_quarantined: 1 });

    expect(deliveries(await scrape())).toEqual({
      "account_locked/delivered": 1,
      "circuit_open/retried": 1,
      "circuit_open/delivered": 1,
      "account_quarantined/dropped": 1,
    });
  }, 30_000);
});
