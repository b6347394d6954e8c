/**
 * The gateway the Keys page's browser tests run against: the demo config with `require_api_key` on and
 * one admin key (`adminSecret`) to sign in and to call the admin API with, a Chromium beside it
 * ({@link withGatewayAndBrowser}: started in `beforeAll`, stopped in `afterAll`), and the calls those
 * tests make through the gateway: a key created, a key as `GET /admin/api/keys` lists it, and one Chat
 * request with a key's secret.
 */
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "./with-gateway-and-browser.ts";

/** Registers the suite's hooks (call at a test file's top level); what its tests call. */
export function keysPageSuite(adminSecret: string) {
  const yaml = `${demoConfigYaml("{{FAKE}}")}server: { require_api_key: true }
keys:
  - { name: admin, key: ${adminSecret}, scopes: [admin] }
`;
  const suite = withGatewayAndBrowser(yaml);
  /** Headers of an admin API call with the admin key. */
  const admin = { "content-type": "application/json", authorization: `Bearer ${adminSecret}` };
  return {
    suite,
    /** The config file's text (`{{FAKE}}` for the fake upstream's URL): its `keys:` list is last. */
    yaml,
    admin,
    /** Creates a stored key (`POST /admin/api/keys`, with `limits` when given); its secret. */
    async createKey(name: string, limits?: unknown): Promise<string> {
      const r = await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: admin, body: JSON.stringify({ name, ...(limits ? { limits } : {}) }) });
      return ((await r.json()) as { secret: string }).secret;
    },
    /** The key named `name` as `GET /admin/api/keys` lists it (undefined when not listed). */
    async listed(name: string): Promise<any> {
      return ((await (await fetch(`${suite.gw.url}/admin/api/keys`, { headers: admin })).json()) as { keys: any[] }).keys.find((k) => k.name === name);
    },
    /** One Chat request with the key `secret` ("hi" to `model`, the demo's priced demo-chat/gpt-demo by default): its status and JSON body. */
    async chat(secret: string, model = "demo-chat/gpt-demo"): Promise<{ status: number; body: any }> {
      const r = await fetch(`${suite.gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
      });
      return { status: r.status, body: await r.json() };
    },
  };
}
