/**
 * The Routing page's dry run "as from loopback" on a gateway that requires keys (newuser14 K9, review14
 * R1), in a real Chromium: the answer says the endpoint would refuse the request (401, an API key is
 * required) on the page, which stays put; with the admin API answering 401 the page took it for an ended
 * session and reloaded to its sign-in view, losing the form and saying nothing.
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const ADMIN = "sy-test-dry-run-require-key-admin-01";

const suite = withGatewayAndBrowser(`${demoConfigYaml("{{FAKE}}")}server: { require_api_key: true }
keys:
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
`);

test("Route it without a client key shows the endpoint's refusal on the same page", async () => {
  const w = await suite.open({ signIn: { key: ADMIN, path: "/dashboard/routing" } });
  const page = w.page;
  try {
    await page.locator("#dr-model").waitFor({ timeout: 10_000 });
    await page.evaluate("window.__samePage = 1");
    await page.locator("#dr-model").fill("fast");
    await page.getByRole("button", { name: "Route it" }).click();
    await page.getByText("The endpoint would refuse this request (401): An API key is required").waitFor({ timeout: 10_000 });
    expect(await page.evaluate("window.__samePage")).toBe(1);
    expect(page.url()).toBe(`${suite.gw.url}/dashboard/routing`);
  } finally {
    await w.close();
  }
}, 40_000);
