/**
 * The instance that served a call, on the embedded (SQLite) store (newuser12a G11; review14 R9): each
 * usage row and route trace names this process's name (`server.instance_name`, else `host:port`) and its
 * id, read back through `GET /admin/api/calls` and `/route-traces/ID`; a reload that names the instance
 * names the calls served after it, with the same id. The name and id are made once per configuration
 * (docs/performance.md item 219), not per request: this pins that a reload still reaches them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { startGateway, type TestGateway } from "../support/gateway.ts";

const yaml = (name?: string) => `server: { ${name ? `instance_name: ${name}` : ""} }
providers:
  - { id: up, kind: openai, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:FAKE_KEY }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(yaml());
});
afterAll(async () => {
  await gw?.stop();
});

const admin = async (path: string, method = "GET") => {
  const res = await fetch(`${gw.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${gw.app.adminToken}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as any;
};
/** One Chat request; its route id once it is listed among the calls (the store flushed). */
const ask = async (text: string) => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "up/gpt-x", messages: [{ role: "user", content: text }] }),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const route = res.headers.get("x-switchyard-route-id")!;
  for (const end = Date.now() + 10_000; Date.now() < end; await Bun.sleep(100)) {
    const call = (await admin("/calls?limit=20")).calls.find((c: any) => c.routeId === route);
    if (call) return { call, trace: await admin(`/route-traces/${route}`) };
  }
  throw new Error(`call ${route} was not listed`);
};

test("each call and its trace name the instance that served it, and a reload's instance_name the calls after it", async () => {
  const first = await ask("before the reload");
  const defaultName = `${hostname()}:${new URL(gw.url).port}`;
  expect(first.call.instance).toBe(defaultName);
  expect(first.call.instanceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const trace = first.trace.trace ?? first.trace;
  expect([trace.instance, trace.instanceId]).toEqual([defaultName, first.call.instanceId]);

  writeFileSync(gw.configPath, yaml("gw-renamed").replaceAll("{{FAKE}}", gw.fake.url));
  await admin("/config/reload", "POST");
  const second = await ask("after the reload");
  expect([second.call.instance, second.call.instanceId]).toEqual(["gw-renamed", first.call.instanceId]);
  const trace2 = second.trace.trace ?? second.trace;
  expect([trace2.instance, trace2.instanceId]).toEqual(["gw-renamed", first.call.instanceId]);
  // the first call keeps the name it was served under
  const again = (await admin("/calls?limit=20")).calls.find((c: any) => c.routeId === first.call.routeId);
  expect(again.instance).toBe(defaultName);

  // usage by instance: one row per name
  const usage = await admin("/usage?by=instance&since=1h");
  expect(usage.rows.map((r: any) => r.group ?? r.instance ?? r.key).sort()).toEqual([defaultName, "gw-renamed"].sort());
});
