/**
 * The admin OpenAPI document asks no more than the live routes take, and names the error statuses
 * they answer. An admin-API tryout (2026-12-07) found a client generated from it (openapi-typescript
 * 7.13 + openapi-fetch 0.13, tsc --strict) did not compile calls the server answers 200:
 * - `PUT /admin/api/combos/{name}` listed `name` as a required body field; the server takes a body
 *   without it (the name is the path's) and answers 200.
 * - `POST /keys/{name}/rotate`, `/accounts/{id}/test`, `/accounts/{id}/restore` and `/discovery`
 *   declared `requestBody.required: true`; the server answers 200 to each with no body at all.
 * Its shared `4XX` answer listed 400, 401, 404 and 409 only, and there was no `5XX` (a store outage's 503);
 * since the evening of 2026-12-07 each operation lists the statuses it answers one by one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

type Op = {
  requestBody?: { required?: boolean; content: Record<string, { schema: { required?: string[] } }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }>;
};
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
      ["/admin/api/accounts/{id}/test", "/admin/api/accounts/anth-1/test"],
      ["/admin/api/discovery", "/admin/api/discovery"],
    ];
    const seen: Record<string, { status: number | string; bodyRequired: boolean }> = {};
    for (const [template, path] of cases) {
      const res = await fetch(`${gw.url}${path}`, { method: "POST" });
      const error = ((await res.json()) as { error?: { code: string | null } }).error;
      // `test` gets past its body to choosing a model: the default config names none (400 model_required).
      seen[template] = { status: error ? `${res.status} ${error.code}` : res.status, bodyRequired: doc.paths[template]!.post!.requestBody?.required ?? false };
    }
    expect(seen).toEqual({
      "/admin/api/keys/{name}/rotate": { status: 200, bodyRequired: false },
      "/admin/api/accounts/{id}/restore": { status: 200, bodyRequired: false },
      "/admin/api/accounts/{id}/test": { status: "400 model_required", bodyRequired: false },
      "/admin/api/discovery": { status: 200, bodyRequired: false },
    });
  });

  test("a route that needs its body still declares it required (POST /keys without one is a 400)", async () => {
    const res = await fetch(`${gw.url}/admin/api/keys`, { method: "POST" });
    const body = (await res.json()) as { error: { message: string } };
    expect({ status: res.status, message: body.error.message, required: doc.paths["/admin/api/keys"]!.post!.requestBody!.required }).toEqual({
      status: 400,
      message: "The request needs a JSON object body.",
      required: true,
    });
  });
});

describe("the admin OpenAPI document's error answers", () => {
  test("each operation lists the statuses it answers one by one (no shared 4XX), each with the error schema, and a 5XX for the rest", () => {
    const listed = (method: string, path: string) =>
      Object.keys(doc.paths[path]![method]!.responses)
        .filter((s) => /^[45]/.test(s))
        .join(" ");
    // every route: 401 403 411 413 414 421; a body: 400 408 415; the store: 503; then its own
    expect(listed("get", "/admin/api/openapi.json")).toBe("401 403 411 413 414 421 5XX");
    expect(listed("get", "/admin/api/keys")).toBe("401 403 411 413 414 421 503 5XX");
    expect(listed("get", "/admin/api/usage")).toBe("400 401 403 411 413 414 421 503 5XX");
    expect(listed("post", "/admin/api/keys")).toBe("400 401 403 408 409 411 413 414 415 421 503 5XX");
    expect(listed("delete", "/admin/api/keys/{name}")).toBe("401 403 404 409 411 413 414 421 503 5XX");
    expect(listed("post", "/admin/api/dry-run")).toBe("400 401 403 404 408 411 413 414 415 421 422 429 503 5XX");
    const rotate = doc.paths["/admin/api/keys/{name}/rotate"]!.post!.responses;
    expect([rotate["404"]!.description, rotate["409"]!.description]).toEqual(["No active key of this name.", "A config-file key."]);
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        expect(op.responses["4XX"]).toBeUndefined();
        for (const [status, r] of Object.entries(op.responses)) {
          if (/^[45]/.test(status)) expect(Object.keys(r.content!["application/json"]!.schema.properties ?? {})).toEqual(["error"]);
        }
      }
    }
  });
});
