/**
 * A real gateway says the browser refusals it held back even when the refused value never comes again
 * (src/http/browser-refusals.ts BrowserRefusalLog.sweep on the app's periodic timer, src/app.ts): 30
 * refusals of one foreign Origin within a minute log one line; once that minute is over, by the
 * instance's clock, the next tick of the timer (SWITCHYARD_REREAD_MS, 10 s by default, 50 ms here) logs
 * "browser rules refused more requests than were logged" with that origin's 29. Before the fix (session
 * 46) the 29 were in the metric only, said in a log line only if that origin was refused again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Clock } from "../../pipeline/ports.ts";
import { realClock } from "../../src/clock.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let offset = 0;
const clock: Clock = { now: () => realClock.now() + offset, sleep: (ms, signal) => realClock.sleep(ms, signal) };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`${fakeProviders([["oai", "openai"]])}`, { clock, env: { SWITCHYARD_REREAD_MS: "50" } });
});
afterAll(async () => {
  await gw?.stop();
});

const lines = () => gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => typeof l.msg === "string" && (l.msg as string).startsWith("browser rules refused"));

test("refusals of an origin that stop within their minute are logged once the minute is over, on the app's timer", async () => {
  const origin = "https://held-back.example";
  for (let i = 0; i < 30; i++) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { origin, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(403);
    await res.text();
  }
  await Bun.sleep(200); // a few ticks within the minute: nothing held back is said yet
  expect(lines().map((l) => [l.msg, l.origin ?? null])).toEqual([["browser rules refused a request", origin]]);
  offset += 60_000;
  const deadline = Date.now() + 3_000;
  while (lines().length < 2 && Date.now() < deadline) await Bun.sleep(20);
  expect(lines().slice(1)).toEqual([{ level: "warn", time: expect.any(Number), msg: "browser rules refused more requests than were logged", refused: [{ reason: "origin", origin, more: 29 }] }]);
}, 15_000);
