/**
 * Found in an admin-API tryout (2026-12-07): the OpenAPI document's request bodies ask more than the
 * live routes do, so a client generated from it (openapi-typescript 7.13 + openapi-fetch 0.13, tsc
 * --strict) does not compile calls the server answers 200:
 * - `PUT /admin/api/combos/{name}` lists `name` as a required body field; the server takes a body
 *   without it (the name is the path's) and answers 200.
 * - `POST /keys/{name}/rotate`, `/accounts/{id}/test`, `/accounts/{id}/restore` and `/discovery`
 *   declare `requestBody.required: true`; the server answers 200 to each with no body at all.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

type Op = { requestBody?: { required?: boolean; content: Record<string, { schema: { required?: string[] } }> } };
let gw: TestGateway;
let doc: { paths: Record<string, Record<string, Op>> };
beforeAll(async () => {
  gw = await startGateway();
  doc = (await (await fetch(`${gw.url}/admin/api/openapi.json`)).json()) as typeof doc;
});
afterAll(async () => {
  await gw?.stop();
});

describe("the admin OpenAPI document's request bodies match what the routes take", () => {
  test("PUT /combos/{name}: the server takes a body without name, and the document does not require one", async () => {
    const made = await fetch(`${gw.url}/admin/api/combos`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "c1", targets: [{ model: "chat/m1" }] }),
    });
    expect(made.status).toBe(201);
    const put = await fetch(`${gw.url}/admin/api/combos/c1`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ targets: [{ model: "chat/m2" }] }),
    });
    expect(put.status).toBe(200);
    const schema = doc.paths["/admin/api/combos/{name}"]!.put!.requestBody!.content["application/json"]!.schema;
    expect(schema.required ?? []).not.toContain("name");
  });

  test("routes the server answers without a body do not declare a required body", async () => {
    const made = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "rk" }) });
    expect(made.status).toBe(201);
    const cases: Array<[string, string]> = [
      ["/admin/api/keys/{name}/rotate", "/admin/api/keys/rk/rotate"],
      ["/admin/api/accounts/{id}/restore", "/admin/api/accounts/anth-1/restore"],
      ["/admin/api/discovery", "/admin/api/discovery"],
    ];
    const seen: Record<string, { status: number; bodyRequired: boolean }> = {};
    for (const [template, path] of cases) {
      const res = await fetch(`${gw.url}${path}`, { method: "POST" });
      await res.body?.cancel();
      seen[template] = { status: res.status, bodyRequired: doc.paths[template]!.post!.requestBody?.required ?? false };
    }
    expect(seen).toEqual({
      "/admin/api/keys/{name}/rotate": { status: 200, bodyRequired: false },
      "/admin/api/accounts/{id}/restore": { status: 200, bodyRequired: false },
      "/admin/api/discovery": { status: 200, bodyRequired: false },
    });
  });
});
