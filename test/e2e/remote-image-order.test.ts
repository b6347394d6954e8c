/**
 * An image given by remote URL and a Gemini target (a new user's tryout, 2026-12-04): Gemini takes
 * only inline data, gs:// or Files API URIs and the gateway does not fetch, so the image is dropped
 * (with a `dropped_media` warning) and the model answers about no picture. The capability split (SPEC
 * R-3, pipeline/order.ts) now counts such an image as unreadable for a Gemini target, so a combo puts
 * a target that takes image URLs first; an inline (data: URL) image keeps the written order.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["anth", "anthropic"])}
    models:
      claude-x: { images: true }
  - id: gem
    kind: gemini
    base_url: "{{FAKE}}"
    models:
      gemini-x: { images: true }
accounts:
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
  - id: gem-1
    provider: gem
    api_key: env:FAKE_KEY
combos:
  - name: gem-then-anth
    targets:
      - model: gem/gemini-x
      - model: anth/claude-x
`;

const suite = gatewaySuite(YAML);

const ask = (model: string, url: string) =>
  fetch(`${suite.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: [{ type: "text", text: "What is in this picture?" }, { type: "image_url", image_url: { url } }] }] }),
  });

const PNG = "data:image/png;base64,iVBORw0KGgo=";

describe("an image by remote URL: a target that takes URLs goes first", () => {
  test("combo [Gemini, Anthropic], both able to read images: the Anthropic target serves, with the image URL", async () => {
    const res = await ask("gem-then-anth", "https://example.com/cat.png");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-warning")).toBeNull();
    expect(suite.gw.fake.requests.map((q) => q.path)).toEqual(["/v1/messages"]);
    expect(suite.gw.fake.requests[0]!.body.messages[0].content).toContainEqual({ type: "image", source: { type: "url", url: "https://example.com/cat.png" } });
  });

  test("the same combo with an inline image: the written order (Gemini first)", async () => {
    const res = await ask("gem-then-anth", PNG);
    expect(res.status).toBe(200);
    expect(suite.gw.fake.requests.map((q) => q.path)).toEqual(["/v1beta/models/gemini-x:generateContent"]);
  });

  test("a Gemini target alone: the image is dropped with a warning that reads 'An image'; the text is sent", async () => {
    const res = await ask("gem/gemini-x", "https://example.com/cat.png");
    expect(res.status).toBe(200);
    expect(JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]")).toEqual([
      { code: "dropped_media", message: "An image given by remote URL was not sent: Gemini takes only inline data, gs:// or Files API URIs, and the gateway does not fetch." },
    ]);
    expect(suite.gw.fake.requests[0]!.body.contents).toEqual([{ role: "user", parts: [{ text: "What is in this picture?" }] }]);
  });
});
