/**
 * FOUND (review of session 46, src/http/browser-refusals.ts `note`): a refusal of the Host rule is
 * logged and counted with the wrong path and surface when the request's Host is empty (`Host:` with no
 * value, which the Host rule refuses with 421). For such a request Bun's `request.url` is the bare
 * request target (`/v1/chat/completions`, no scheme or authority), and `pathOf` (src/http/browser-guard.ts)
 * looks for the path after a `//` that is not there, so it drops the first segment.
 *
 * What a user (operator) would notice: the warn line says `"path":"/chat/completions"`,
 * `"surface":"other"` for a POST to /v1/chat/completions, and the metric counts
 * `switchyard_browser_refusals_total{reason="host",surface="other"}` instead of `surface="api"`.
 * Expected: path "/v1/chat/completions", surface "api". Actual: path "/chat/completions", surface "other".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
server:
  host: 127.0.0.1
${fakeProviders([["oai", "openai"]])}`);
});
afterAll(async () => {
  await gw?.stop();
});

/** Sends `text` (a request head and body) on a new connection; the status of the answer. */
function sendRaw(text: string): Promise<number> {
  const port = Number(new URL(gw.url).port);
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port }, () => s.write(text));
    let out = "";
    s.on("data", (d) => {
      out += d.toString();
      if (out.includes("\r\n\r\n")) {
        s.destroy();
        resolve(Number(out.split(" ")[1]));
      }
    });
    s.on("error", reject);
  });
}

test("an empty Host's 421 is logged and counted with the request's own path and the api surface", async () => {
  const body = JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] });
  expect(await sendRaw(`POST /v1/chat/completions HTTP/1.1\r\nHost: \r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)).toBe(421);
  const lines = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "browser rules refused a request");
  expect(lines.map((l) => ({ reason: l.reason, host: l.host, path: l.path, surface: l.surface }))).toEqual([{ reason: "host", host: "", path: "/v1/chat/completions", surface: "api" }]);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(metrics).toContain(`switchyard_browser_refusals_total{reason="host",surface="api"} 1`);
});
