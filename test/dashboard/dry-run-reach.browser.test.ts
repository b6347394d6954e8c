/**
 * The Routing page's dry run says which attempts a request would not make (SPEC 6.1's fallback budget;
 * pipeline/attempt-budget.ts `markBudgetReach`), in a real browser, as `switchyard route` says it
 * (src/cli/routing.ts `formatRoutePlan`): an attempt past `settings.max_attempts` is left out of the
 * attempt order and named on a line "not reached: a request makes at most 2 attempts
 * (settings.max_attempts): …"; for a non-streamed request the attempts after a call that may outwait
 * the pre-commit deadline stay in the order, and a line says "not reached if … never answers: …".
 * Before, the page listed every attempt as if each would be tried. Screenshot to test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { fakeProviders } from "../support/configs.ts";
import { formatRoutePlan } from "../../src/cli/routing.ts";

const YAML = `
${fakeProviders([["anth", "anthropic"], ["oai", "openai"], ["back", "anthropic"]])}settings:
  max_attempts: 2
combos:
  - name: trio
    targets:
      - model: anth/claude-test
      - model: oai/gpt-test
      - model: back/claude-test
`;

const suite = withGatewayAndBrowser(YAML);

const BEYOND = "not reached: a request makes at most 2 attempts (settings.max_attempts): back/claude-test @ back-1";
const IF_HANG =
  "not reached if anth/claude-test @ anth-1 never answers: a non-streamed call waits reply_timeout_ms (600000 ms), not less than the pre-commit deadline (60000 ms, settings.precommit_deadline_ms): oai/gpt-test @ oai-1";

/** The CLI's lines after its attempt order for the same dry run (`switchyard route trio`). */
async function cliReachLines(stream: boolean): Promise<string[]> {
  const res = await fetch(`${suite.gw.url}/admin/api/dry-run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "trio", request: { messages: [{ role: "user", content: "hi" }], ...(stream ? { stream: true } : {}) } }),
  });
  expect(res.status).toBe(200);
  const lines = formatRoutePlan((await res.json()) as Parameters<typeof formatRoutePlan>[0]).split("\n");
  return lines.slice(lines.findIndex((l) => l.startsWith("attempt order: ")));
}

test("the dry run leaves out the attempt past max_attempts and says, in the CLI's words, which attempts are not reached and when", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/routing`);
    await page.locator("#dr-model").fill("trio");
    await page.getByRole("button", { name: "Route it" }).click();
    const plan = page.locator(".plan");
    const reach = plan.locator(".attempt-reach");
    await reach.first().waitFor({ timeout: 10_000 });
    const order = async () => (await plan.locator("ol.attempt-order li").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
    // Two attempts, as the CLI's attempt order: the third target is past max_attempts.
    expect(await order()).toEqual(["1anth/claude-test on anth-1", "2oai/gpt-test on oai-1"]);
    expect(await reach.allInnerTexts()).toEqual([BEYOND, IF_HANG]);
    expect(await cliReachLines(false)).toEqual(["attempt order: anth/claude-test @ anth-1 → oai/gpt-test @ oai-1", BEYOND, IF_HANG]);
    await page.screenshot({ path: join(SHOTS, "routing-dry-run-not-reached.png"), fullPage: true });

    // A streamed request: a hanging first call's header wait is cut, so the second attempt is reached.
    await page.locator("#dr-body").fill('{ "messages": [{ "role": "user", "content": "hi" }], "stream": true }');
    await page.getByRole("button", { name: "Route it" }).click();
    await page.locator('.attempt-reach[data-reach="notReachedIf"]').waitFor({ state: "detached", timeout: 10_000 });
    expect(await order()).toEqual(["1anth/claude-test on anth-1", "2oai/gpt-test on oai-1"]);
    expect(await reach.allInnerTexts()).toEqual([BEYOND]);
    expect(await cliReachLines(true)).toEqual(["attempt order: anth/claude-test @ anth-1 → oai/gpt-test @ oai-1", BEYOND]);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
