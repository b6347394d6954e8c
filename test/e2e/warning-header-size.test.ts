/**
 * A warning that quotes a large part of the client's request (a 40 KB field name, a 40 KB reasoning
 * effort) no longer costs a Node client its reply: the X-Switchyard-Warning header was the whole text,
 * and Node's HTTP client (undici: the SDKs' and `fetch`'s on Node) refused the response with
 * UND_ERR_HEADERS_OVERFLOW. The header is bounded; the route trace keeps the warning whole.
 */
import { describe, expect, test } from "bun:test";
import { WARNING_HEADER_MAX } from "../../pipeline/warning-header.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

/** Posts `body` with Node's own fetch (undici) and says what Node read: the status and text, or the error code. */
async function nodePost(url: string, body: string): Promise<{ status?: number; text?: string; warning?: string; error?: string }> {
  const script = `fetch(process.argv[1], { method: "POST", headers: { "content-type": "application/json" }, body: require("fs").readFileSync(0, "utf8") })
    .then(async (r) => console.log(JSON.stringify({ status: r.status, warning: r.headers.get("x-switchyard-warning"), text: await r.text() })))
    .catch((e) => console.log(JSON.stringify({ error: (e.cause && e.cause.code) || e.message })));`;
  const proc = Bun.spawn(["node", "-e", script, url], { stdin: new TextEncoder().encode(body), stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out);
}

describe("X-Switchyard-Warning stays readable to a Node client", () => {
  test("a Chat request with a 40 KB unknown field and a 40 KB reasoning effort to Anthropic: Node reads the reply and the cut warnings", async () => {
    const body = JSON.stringify({ model: "anth/claude-x", messages: [{ role: "user", content: "hi" }], reasoning_effort: "e".repeat(40_000), ["f".repeat(40_000)]: 1 });
    const got = await nodePost(`${suite.gw.url}/v1/chat/completions`, body);
    expect(got.error).toBeUndefined();
    expect(got.status).toBe(200);
    expect(JSON.parse(got.text!).choices[0].message.role).toBe("assistant");
    expect(got.warning!.length).toBeLessThanOrEqual(WARNING_HEADER_MAX);
    const warnings = JSON.parse(got.warning!) as { code: string; message: string }[];
    expect(warnings.map((w) => w.code)).toContain("dropped_reasoning_effort");
    for (const w of warnings) expect(w.message.length).toBeLessThanOrEqual(513);
  });
});
