/**
 * A body without a field it needs reads `FIELD: required` on every admin route that takes one (the
 * strictBody wording), never valibot's raw text. An admin-API tryout (2026-12-07) saw `POST /combos {}`
 * answer `name: Invalid key: Expected "name" but received undefined` where `POST /keys {}` said
 * `name: required`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const send = async (method: string, path: string, body: unknown) => {
  const res = await fetch(`${gw.url}/admin/api${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = (await res.json()) as { error?: { message: string; param: string | null } };
  return { status: res.status, message: json.error?.message, param: json.error?.param };
};

test("POST /combos {} says name: required, as POST /keys and POST /aliases do", async () => {
  expect({ combos: await send("POST", "/combos", {}), keys: await send("POST", "/keys", {}), aliases: await send("POST", "/aliases", {}) }).toEqual({
    combos: { status: 400, message: "name: required", param: "name" },
    keys: { status: 400, message: "name: required", param: "name" },
    aliases: { status: 400, message: "name: required", param: "name" },
  });
});

test("no route of the OpenAPI document that takes a body answers {} with valibot's raw text", async () => {
  const doc = (await (await fetch(`${gw.url}/admin/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
  const made = [
    (await send("POST", "/keys", { name: "k1" })).status,
    (await send("POST", "/combos", { name: "c1", targets: [{ model: "chat/m1" }] })).status,
    (await send("POST", "/aliases", { name: "a1", target: "chat/m1" })).status,
  ];
  expect(made).toEqual([201, 201, 201]);
  const raw: string[] = [];
  let asked = 0;
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op.requestBody) continue;
      const id = template.includes("/combos/") ? "c1" : template.includes("/aliases/") ? "a1" : "k1";
      const path = template.slice("/admin/api".length).replace("{name}", id).replace("{id}", "anth-1");
      const r = await send(method.toUpperCase(), path, {});
      asked++;
      if (r.message !== undefined && /Invalid (key|type)|but received/.test(r.message)) raw.push(`${method} ${template}: ${r.message}`);
    }
  }
  expect({ asked: asked >= 12, raw }).toEqual({ asked: true, raw: [] });
});
