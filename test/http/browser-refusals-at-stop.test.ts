/**
 * Found by a session 46 review of 6d4a6960, fixed that session (src/stop-gateway.ts `lastLines`, the
 * app's `BrowserRefusalLog.flush`). What an operator noticed before the fix: a gateway stopped (SIGTERM,
 * `switchyard stop`) less than a minute after a web page of a foreign origin was refused 30 times logs
 * one line, "browser rules refused a request", and nothing else: the other 29 refusals, held back
 * within that minute (src/http/browser-refusals.ts BrowserRefusalLog), are said by no line. The sweep
 * that says them (BrowserRefusalLog.sweep) runs only on the app's 10 s timer for windows whose minute
 * is over, and src/app.ts stop() clears that timer without a last sweep of the windows still running;
 * the counts were in memory only (the metric goes with the process too).
 *
 * Expected: by the time stop() resolves, a line says the 29 held back (as the timer's line does once
 * the minute is over: "browser rules refused more requests than were logged", refused: [{ reason:
 * "origin", origin, more: 29 }]). Before the fix (cbd16235): only the first refusal's line.
 */
import { expect, test } from "bun:test";
import { startGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

test("refusals held back within their minute are said when the gateway stops before the minute is over", async () => {
  const gw = await startGateway(`${fakeProviders([["oai", "openai"]])}`, {});
  const origin = "https://held-back-at-stop.example";
  for (let i = 0; i < 30; i++) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { origin, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(403);
    await res.text();
  }
  await gw.stop();
  const lines = gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => typeof l.msg === "string" && (l.msg as string).startsWith("browser rules refused"));
  const said = lines.reduce((n, l) => n + (l.msg === "browser rules refused a request" ? 1 + Number(l.more ?? 0) : ((l.refused as Array<{ more: number }>) ?? []).reduce((m, r) => m + r.more, 0)), 0);
  expect({ refusals: 30, saidInLog: said }).toEqual({ refusals: 30, saidInLog: 30 });
}, 15_000);
