/**
 * Which instance served a call (newuser12a G11): two real `switchyard start --database postgres://…`
 * processes on one PostgreSQL, A named by `server.instance_name: gw-a`, B by its default (`host:port`).
 * A request through each; then, read from either instance: each call of `GET /admin/api/calls` names the
 * instance that served it (name and id), so does its route trace (`GET /admin/api/route-traces/ID`
 * and `switchyard calls inspect`), `switchyard calls list` has an instance column, `GET
 * /admin/api/usage?by=instance` counts one request under each, and `?instance=` filters the calls;
 * the dashboard's Calls page (real Chromium) has an Instance column and its call view an Instance line.
 * `switchyard calls inspect ID --bodies` on the instance that did not serve the call names the one that
 * did and how to ask it (its URL), where the recording is (try20 D5: it said "repeat the request").
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hostname } from "node:os";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { launchBrowser, openPage, type TestBrowser } from "../support/browser.ts";
import { SOURCE_CLI, startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { cliOn } from "../support/source-cli.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

const ENV = { UP_KEY: "sk-upstream-served-by" };

let pg: TestPostgres;
let upstream: FakeUpstream;
let a: Instance;
let b: Instance;
let browser: TestBrowser | undefined;

const yamlOf = (name?: string) => `server: { ${name ? `instance_name: ${name}` : ""} }
providers:
  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
`;

const chat = (inst: Instance, text: string) =>
  fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "up/gpt-x", messages: [{ role: "user", content: text }] }),
  });
const admin = async (inst: Instance, path: string) => {
  const res = await fetch(`${inst.url}/admin/api${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as any;
};
/** The CLI from source against `inst` (its data directory's instance.json). */
const cli = (inst: Instance, args: string[]) => cliOn(inst.dataDir, args);

beforeAll(async () => {
  pg = await startPostgres();
  const dbUrl = await pg.createDatabase("served_by");
  upstream = await startFakeUpstream();
  a = await startInstance({ yaml: yamlOf("gw-a"), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  b = await startInstance({ yaml: yamlOf(), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([a && stopInstance(a), b && stopInstance(b)]);
  await upstream?.stop();
  await pg?.destroy();
}, 60_000);

test("each call, its trace and the usage by instance name the instance that served it, read from either instance", async () => {
  const ra = await chat(a, "through a");
  const rb = await chat(b, "through b");
  expect([ra.status, rb.status]).toEqual([200, 200]);
  const routeA = ra.headers.get("x-switchyard-route-id")!;
  const routeB = rb.headers.get("x-switchyard-route-id")!;
  await Promise.all([ra.text(), rb.text()]);
  const bName = `${hostname()}:${new URL(b.url).port}`;

  // A's answer lists B's call once B has flushed it (within a second)
  let calls: any[] = [];
  for (const end = Date.now() + 15_000; Date.now() < end; await Bun.sleep(200)) {
    calls = (await admin(a, "/calls?limit=10")).calls;
    if (calls.length >= 2) break;
  }
  const byRoute = Object.fromEntries(calls.map((c) => [c.routeId, c]));
  expect(byRoute[routeA]?.instance).toBe("gw-a");
  expect(byRoute[routeB]?.instance).toBe(bName);
  expect(byRoute[routeA].instanceId).toMatch(/^[0-9a-f-]{36}$/);
  expect(byRoute[routeB].instanceId).toMatch(/^[0-9a-f-]{36}$/);
  expect(byRoute[routeA].instanceId).not.toBe(byRoute[routeB].instanceId);

  // the route traces, read through the other instance
  const traceA = await admin(b, `/route-traces/${routeA}`);
  const traceB = await admin(a, `/route-traces/${routeB}`);
  expect([traceA.instance, traceA.instanceId]).toEqual(["gw-a", byRoute[routeA].instanceId]);
  expect([traceB.instance, traceB.instanceId]).toEqual([bName, byRoute[routeB].instanceId]);

  // the usage grouped by instance, and the calls filtered by one
  const usage = await admin(b, "/usage?since=1h&by=instance");
  expect(Object.fromEntries(usage.rows.map((r: any) => [r.group, r.requests]))).toEqual({ "gw-a": 1, [bName]: 1 });
  const onlyB = (await admin(a, `/calls?instance=${encodeURIComponent(bName)}`)).calls;
  expect(onlyB.map((c: any) => c.routeId)).toEqual([routeB]);

  // the CLI: calls list's instance column, calls inspect's instance line
  const list = cli(a, ["calls", "list", "--limit", "5"]);
  expect(list.code).toBe(0);
  const [head, ...rows] = list.stdout.trim().split("\n");
  expect(head).toMatch(/\binstance$/);
  expect(rows.find((l) => l.includes(routeA))).toMatch(/\bgw-a$/);
  expect(rows.find((l) => l.includes(routeB))!.endsWith(bName)).toBe(true);
  const inspect = cli(b, ["calls", "inspect", routeA]);
  expect(inspect.code).toBe(0);
  expect(inspect.stdout).toContain(`instance    gw-a (${byRoute[routeA].instanceId})`);

  // the dashboard on A: an Instance column (calls of two instances), and the call view of B's call
  browser = await launchBrowser();
  const w = await openPage(browser, a.url);
  try {
    await w.page.goto(`${a.url}/dashboard/calls`);
    const rowA = w.page.locator(`tr[data-route-id="${routeA}"]`);
    const rowB = w.page.locator(`tr[data-route-id="${routeB}"]`);
    await rowB.waitFor({ timeout: 10_000 });
    expect(await w.page.locator("table.calls th").allInnerTexts()).toContain("Instance");
    expect((await rowA.locator("td.call-instance").innerText()).trim()).toBe("gw-a");
    expect((await rowB.locator("td.call-instance").innerText()).replace(/\s/g, "")).toBe(bName);
    await rowB.click();
    const view = w.page.locator(".trace dd.call-instance");
    await view.waitFor({ timeout: 10_000 });
    expect((await view.innerText()).replace(/\s/g, "")).toBe(bName);
    expect(await view.getAttribute("title")).toBe(`instance id ${byRoute[routeB].instanceId}`);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 90_000);

test("calls inspect --bodies on A for a call B served names B and its URL; asked there, B prints the bodies", async () => {
  // the recorder on, as an operator turns it on (the setting reaches every instance)
  const on = await fetch(`${b.url}/admin/api/settings`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ flight_recorder: { enabled: true } }) });
  expect(on.status).toBe(200);
  const rb = await chat(b, "recorded on b");
  expect(rb.status).toBe(200);
  const routeB = rb.headers.get("x-switchyard-route-id")!;
  await rb.text();
  // A reads B's trace once B has flushed it (within a second)
  for (const end = Date.now() + 15_000; Date.now() < end; await Bun.sleep(200)) {
    if ((await fetch(`${a.url}/admin/api/route-traces/${routeB}`)).status === 200) break;
  }
  const bName = `${hostname()}:${new URL(b.url).port}`;
  const miss = cli(a, ["calls", "inspect", routeB, "--bodies"]);
  expect(miss.code).toBe(1);
  expect(miss.stderr).toContain(`no bodies: The call ${routeB} was served by instance ${bName} (`);
  expect(miss.stderr).toContain(`ask it: switchyard calls inspect ${routeB} --bodies --url ${b.url} `);
  expect(miss.stderr).not.toContain("repeat the request");
  const asked = Bun.spawnSync([...SOURCE_CLI, "calls", "inspect", routeB, "--bodies", "--url", b.url], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: b.dataDir }, stdout: "pipe", stderr: "pipe" });
  expect([asked.exitCode, asked.stderr.toString()]).toEqual([0, ""]);
  expect(asked.stdout.toString()).toContain("recorded on b");
}, 90_000);
