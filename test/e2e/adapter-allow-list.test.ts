/**
 * A client key's `models` allow-list holds for the capacity adapter too (SPEC 9.6 "a model outside the
 * allow-list → 403", SPEC R-3's capacity adapter): a key limited to `fast`, a model that does not read
 * images, that attaches an image is not served by the adapter's image model, which it could not ask for
 * by name; it gets what it would get with no adapter configured (the model it named) and a warning
 * saying why. A key whose allow-list names the adapter's model, or an alias of it, is served by it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

const ADMIN = "sy-admin-adapter-allow-list-0001";
const yaml = (adapter: string) => `
providers:
  - id: fo
    kind: openai
    base_url: "{{FAKE}}/v1"
    models: { gpt-demo: { images: false } }
  - id: fa
    kind: anthropic
    base_url: "{{FAKE}}"
    models: { claude-vision-expensive: { images: true } }
accounts:
  - { id: fo-1, provider: fo, api_key: env:FAKE_KEY }
  - { id: fa-1, provider: fa, api_key: env:FAKE_KEY }
aliases:
  fast: fo/gpt-demo
  vision: fa/claude-vision-expensive
server: { require_api_key: true }
keys:
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
settings:
  capacity_adapter: ${adapter}
`;

const IMAGE = { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==" } };

let gw: TestGateway;
const secrets = new Map<string, string>();

/** A key made through the admin API (as `switchyard keys create NAME --models …` does). */
async function createKey(url: string, name: string, models?: string[]): Promise<string> {
  const res = await fetch(`${url}/admin/api/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ name, ...(models ? { limits: { models } } : {}) }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { secret: string }).secret;
}

const ask = (url: string, key: string, model: string, content: unknown) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });

const withImage = [{ type: "text", text: "what is this" }, IMAGE];
/** The models the fake upstream was asked for since `from`. */
const askedSince = (from: number) => gw.fake.requests.slice(from).map((r) => r.model);

beforeAll(async () => {
  gw = await startGateway(yaml("{ images: [fa/claude-vision-expensive] }"));
  secrets.set("dev1", await createKey(gw.url, "dev1", ["fast"]));
  secrets.set("dev2", await createKey(gw.url, "dev2", ["fast", "fa/claude-vision-expensive"]));
  secrets.set("dev3", await createKey(gw.url, "dev3", ["fast", "vision"]));
  secrets.set("dev4", await createKey(gw.url, "dev4", ["fast", "fa/*"]));
  secrets.set("open", await createKey(gw.url, "open"));
});
afterAll(async () => {
  await gw?.stop();
});

describe("the capacity adapter and a key's models allow-list", () => {
  test("a key limited to fast: not served the adapter's model by name (403) nor through an image (the model it named, with a warning); keys allowed it are", async () => {
    const byName = await ask(gw.url, secrets.get("dev1")!, "fa/claude-vision-expensive", "hi");
    expect(byName.status).toBe(403);
    expect(((await byName.json()) as any).error.code).toBe("model_not_allowed");

    // An image: the model it named (what a request gets with no adapter configured), nothing sent to the adapter's model.
    const from = gw.fake.requests.length;
    const res = await ask(gw.url, secrets.get("dev1")!, "fast", withImage);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.object).toBe("chat.completion");
    expect(typeof body.choices[0].message.content).toBe("string");
    expect(askedSince(from)).toEqual(["gpt-demo"]);
    const warning = JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]");
    expect(warning).toContainEqual({
      code: "capacity_adapter_not_allowed",
      message: 'The current user turn carries images, which the model requested is not known to read; the capacity adapter\'s models for images are not in the models allow-list of client key "dev1", so the request went to the model requested.',
    });
    const trace = (await (await fetch(`${gw.url}/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as any;
    expect(trace.attempts.map((a: any) => a.target)).toEqual(["fo/gpt-demo"]);
    expect(trace.decisions).toContainEqual({ subject: "fa/claude-vision-expensive", verdict: "out", reason: 'capacity adapter for images: not in the models allow-list of client key "dev1"' });

    // The dry run with that key says the same.
    const dry = await fetch(`${gw.url}/admin/api/dry-run`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ key: "dev1", request: { model: "fast", messages: [{ role: "user", content: withImage }] } }),
    });
    expect(dry.status).toBe(200);
    const plan = (await dry.json()) as any;
    expect(plan.targets.map((t: any) => t.target)).toEqual(["fo/gpt-demo"]);
    expect(JSON.stringify(plan.decisions)).toContain('not in the models allow-list of client key \\"dev1\\"');

    // Without an image: fast, no warning.
    const plain = await ask(gw.url, secrets.get("dev1")!, "fast", "hi");
    expect(plain.status).toBe(200);
    await plain.text();
    expect(plain.headers.get("x-switchyard-warning")).toBeNull();

    // A key allowed the adapter's model (by name, by an alias of it, by provider/*) or with no list: the adapter serves.
    for (const name of ["dev2", "dev3", "dev4", "open"]) {
      const at = gw.fake.requests.length;
      const r = await ask(gw.url, secrets.get(name)!, "fast", withImage);
      expect([name, r.status]).toEqual([name, 200]);
      expect(((await r.json()) as any).object).toBe("chat.completion");
      expect([name, askedSince(at)]).toEqual([name, ["claude-vision-expensive"]]);
      expect(r.headers.get("x-switchyard-warning") ?? "").not.toContain("capacity_adapter_not_allowed");
    }
  });
});
