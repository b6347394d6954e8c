/**
 * Combos, aliases, settings and account disable/enable through the admin API (SPEC 2.3, 9.3) on the
 * real gateway: objects created in the database are used by the next request, listed by /v1/models
 * and survive a restart; the file's objects are read-only (409 naming the file); bad objects are 400s
 * naming the field with the config loader's own words; `POST /config/reload` says what changed or why
 * the file was rejected. Each change of combos, aliases, providers or settings, stored or from the
 * file, is a `routing_changed` live event naming what changed (open Routing pages follow it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openEvents } from "../support/admin-events.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const yaml = (keyFile: string) => `
${providersAtFake(["p", "anthropic"], ["q", "openai-compatible"], ["r", "openai-compatible"])}
accounts:
  - id: a1
    provider: p
    api_key: file:${keyFile}
  - id: a2
    provider: p
    api_key: env:KEY_A2
  - id: off
    provider: r
    api_key: env:KEY_A2
    disabled: true
combos:
  - name: filecombo
    targets:
      - model: p/claude-file
aliases:
  filealias: p/claude-file
settings:
  account_strategy: round-robin
`;
const ENV = { KEY_A2: "sk-test-account-two" };

let gw: TestGateway;
let keyFile: string;
let YAML: string;
beforeAll(async () => {
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  keyFile = join(mkdtempSync(join(tmpdir(), "sy-key-")), "a1.key");
  writeFileSync(keyFile, "sk-test-account-one\n");
  YAML = yaml(keyFile);
  gw = await startGateway(YAML, { env: ENV });
});
afterAll(async () => {
  await gw?.stop();
});

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${gw.url}/admin/api${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
const json = async (r: Response) => (await r.json()) as any;
const messages = (model: string) =>
  fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
const modelIds = async () => ((await (await fetch(`${gw.url}/v1/models`)).json()) as any).data.map((m: any) => m.id) as string[];

describe("combos", () => {
  test("a combo created here serves the next request and is listed by /v1/models", async () => {
    const created = await api("POST", "/combos", { name: "dbcombo", strategy: "fallback", targets: [{ model: "p/claude-db" }, { model: "q/glm-db" }] });
    expect(created.status).toBe(201);
    expect(await json(created)).toEqual({
      name: "dbcombo",
      strategy: "fallback",
      portability: "strip_with_warning",
      cache_affinity: true,
      targets: [
        { model: "p/claude-db", weight: 1 },
        { model: "q/glm-db", weight: 1 },
      ],
      source: "db",
      active: true,
    });
    const res = await messages("dbcombo");
    expect(res.status).toBe(200);
    await res.text();
    expect(gw.fake.requests.at(-1)!.model).toBe("claude-db");
    expect(await modelIds()).toEqual(expect.arrayContaining(["dbcombo", "filecombo"]));
    const list = (await json(await api("GET", "/combos"))).combos;
    expect(list.map((c: any) => [c.name, c.source])).toEqual([
      ["filecombo", "config"],
      ["dbcombo", "db"],
    ]);
    expect((await json(await api("GET", "/combos/dbcombo"))).targets[1].model).toBe("q/glm-db");
  });

  test("PUT changes it for the next request; the path's name wins", async () => {
    const put = await api("PUT", "/combos/dbcombo", { targets: [{ model: "q/glm-first" }] });
    expect(put.status).toBe(200);
    expect((await json(put)).targets).toEqual([{ model: "q/glm-first", weight: 1 }]);
    const res = await messages("dbcombo");
    await res.text();
    expect(gw.fake.requests.at(-1)!.model).toBe("glm-first");
    const renamed = await api("PUT", "/combos/dbcombo", { name: "other", targets: [{ model: "q/x" }] });
    expect(renamed.status).toBe(400);
    expect((await json(renamed)).error.param).toBe("name");
  });

  test("the file's combo is read-only: 409 naming the file; its name cannot be taken", async () => {
    for (const [method, body] of [["PUT", { targets: [{ model: "p/x" }] }], ["DELETE", undefined]] as const) {
      const r = await api(method, "/combos/filecombo", body);
      expect(r.status).toBe(409);
      const e = (await json(r)).error;
      expect(e.message).toContain(gw.configPath);
      expect(e.message).toContain("filecombo");
    }
    for (const name of ["filecombo", "filealias"]) {
      const r = await api("POST", "/combos", { name, targets: [{ model: "p/x" }] });
      expect(r.status).toBe(409);
      expect((await json(r)).error.message).toContain(gw.configPath);
    }
  });

  test("validated like the config file: 400 naming the field in the loader's words", async () => {
    const unknownProvider = await api("POST", "/combos", { name: "bad", targets: [{ model: "nope/x" }] });
    expect(unknownProvider.status).toBe(400);
    const e1 = (await json(unknownProvider)).error;
    expect(e1.param).toBe("targets[0].model");
    expect(e1.message).toStartWith('targets[0].model: unknown provider "nope" in "nope/x"');
    const badStrategy = await api("POST", "/combos", { name: "bad", strategy: "sometimes", targets: [{ model: "p/x" }] });
    expect(badStrategy.status).toBe(400);
    const e2 = (await json(badStrategy)).error;
    expect(e2.param).toBe("strategy");
    expect(e2.message).toStartWith("strategy must be one of fallback,"); // the field named once
    const unknownKey = await api("POST", "/combos", { name: "bad", targets: [{ model: "p/x" }], colour: "red" });
    expect(unknownKey.status).toBe(400);
    expect((await json(unknownKey)).error.param).toBe("colour");
    const noName = await api("POST", "/combos", { targets: [{ model: "p/x" }] });
    expect(noName.status).toBe(400);
    expect((await json(noName)).error.param).toBe("name");
    // Nothing was stored.
    expect((await json(await api("GET", "/combos"))).combos.map((c: any) => c.name)).not.toContain("bad");
    expect((await api("GET", "/combos/bad")).status).toBe(404);
  });

  test("a PUT that closes a cycle of two combos is a 400 naming the cycle, as check-config does (it said the other combo was no combo); nothing changes", async () => {
    expect((await api("POST", "/combos", { name: "cy1", targets: [{ model: "p/m1" }] })).status).toBe(201);
    expect((await api("POST", "/combos", { name: "cy2", targets: [{ model: "cy1" }] })).status).toBe(201);
    const closing = await api("PUT", "/combos/cy1", { targets: [{ model: "cy2" }] });
    expect(closing.status).toBe(400);
    const e = (await json(closing)).error;
    expect([e.param, e.message]).toEqual(["targets[0].model", "targets[0].model: reference cycle: cy1 → cy2 → cy1"]);
    // through a stored alias, the cycle said from the changed combo's side
    expect((await api("POST", "/aliases", { name: "cya", target: "cy2" })).status).toBe(201);
    const viaAlias = await api("PUT", "/combos/cy1", { targets: [{ model: "p/m1" }, { model: "cya" }] });
    expect(viaAlias.status).toBe(400);
    expect((await json(viaAlias)).error.message).toBe("targets[1].model: reference cycle: cy1 → cya → cy2 → cy1");
    expect((await json(await api("GET", "/combos/cy1"))).targets).toEqual([{ model: "p/m1", weight: 1 }]);
    expect((await json(await api("GET", "/combos/cy2"))).targets).toEqual([{ model: "cy1", weight: 1 }]);
    expect((await api("DELETE", "/aliases/cya")).status).toBe(200);
    for (const name of ["cy2", "cy1"]) expect((await api("DELETE", `/combos/${name}`)).status).toBe(200);
  });
});

describe("a body nested too deeply (SPEC 2.6)", () => {
  test("combo params nested 90,000 levels: a 400 naming the limit, nothing stored, the gateway still serves; 995 levels are taken", async () => {
    const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
    const send = (method: string, path: string, text: string) => fetch(`${gw.url}/admin/api${path}`, { method, headers: { "content-type": "application/json" }, body: text });
    const combo = (depth: number, name = "deepcombo") => `{"name":"${name}","targets":[{"model":"p/claude-deep","params":{"metadata":${nested(depth)}}}]}`;
    expect((await api("POST", "/combos", { name: "deepcombo", targets: [{ model: "p/claude-deep" }] })).status).toBe(201);
    for (const [method, path, name] of [["POST", "/combos", "deepcombo2"], ["PUT", "/combos/deepcombo", "deepcombo"]]) {
      const r = await send(method!, path!, combo(90_000, name));
      expect(r.status).toBe(400);
      expect((await json(r)).error).toEqual({ message: "The body nests arrays and objects more than 1000 levels deep.", type: "invalid_request_error", param: null, code: null });
    }
    expect((await json(await api("GET", "/combos/deepcombo"))).targets).toEqual([{ model: "p/claude-deep", weight: 1 }]);
    expect((await api("GET", "/combos/deepcombo2")).status).toBe(404);
    const res = await messages("deepcombo");
    await res.text();
    expect(res.status).toBe(200);
    // The body, targets, a target and params are 4 levels: 995 in all.
    const ok = await send("PUT", "/combos/deepcombo", combo(991));
    expect(ok.status).toBe(200);
    expect((await api("DELETE", "/combos/deepcombo")).status).toBe(200);
  });
});

describe("aliases", () => {
  test("created, used, changed, listed; the file's are read-only", async () => {
    const created = await api("POST", "/aliases", { name: "dbalias", target: "dbcombo" });
    expect(created.status).toBe(201);
    expect(await json(created)).toEqual({ name: "dbalias", target: "dbcombo", source: "db", active: true });
    let res = await messages("dbalias");
    await res.text();
    expect(gw.fake.requests.at(-1)!.model).toBe("glm-first");
    expect(await modelIds()).toContain("dbalias");

    expect((await api("PUT", "/aliases/dbalias", { target: "p/claude-aliased" })).status).toBe(200);
    res = await messages("dbalias");
    await res.text();
    expect(gw.fake.requests.at(-1)!.model).toBe("claude-aliased");

    const list = (await json(await api("GET", "/aliases"))).aliases;
    expect(list).toEqual(expect.arrayContaining([
      { name: "filealias", target: "p/claude-file", source: "config", active: true },
      { name: "dbalias", target: "p/claude-aliased", source: "db", active: true },
    ]));
    const ro = await api("PUT", "/aliases/filealias", { target: "p/x" });
    expect(ro.status).toBe(409);
    expect((await json(ro)).error.message).toContain(gw.configPath);
    const bad = await api("POST", "/aliases", { name: "broken", target: "nowhere" });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error).toMatchObject({ param: "target" });
    expect((await api("POST", "/aliases", { name: "x" })).status).toBe(400);
    // a name that would show as another in the dashboard (a right-to-left override, a zero-width space) is refused
    for (const name of ["\u202eevil", "dbalias\u200b", "dbalias\u3164", "fast\ufe0f", "x\ud800"]) {
      const spoof = await api("POST", "/aliases", { name, target: "p/x" });
      expect(spoof.status).toBe(400);
      expect((await json(spoof)).error.message).toContain("invisible characters");
    }
    // a stored name cannot be created again, as an alias or a combo: the 409 says what holds it ("A alias" until 2026-12-05)
    for (const path of ["/aliases", "/combos"]) {
      const taken = await api("POST", path, path === "/aliases" ? { name: "dbalias", target: "p/x" } : { name: "dbalias", targets: [{ model: "p/x" }] });
      expect(taken.status).toBe(409);
      expect((await json(taken)).error.message).toBe('An alias named "dbalias" exists; change it with PUT.');
    }
    const comboTaken = await api("POST", "/aliases", { name: "dbcombo", target: "p/x" });
    expect((await json(comboTaken)).error.message).toBe('A combo named "dbcombo" exists; change it with PUT.');
  });

  test("a combo a stored alias points to cannot be deleted from under it: one sentence names who uses it and what to do (newuser13's tryout, J8)", async () => {
    await api("PUT", "/aliases/dbalias", { target: "dbcombo" });
    const del = await api("DELETE", "/combos/dbcombo");
    expect(del.status).toBe(409);
    expect((await json(del)).error).toMatchObject({ code: "breaks_dependents", message: "Combo dbcombo is used by stored alias dbalias: point dbalias elsewhere or delete it first." });
    expect((await api("POST", "/aliases", { name: "second", target: "dbcombo" })).status).toBe(201);
    const two = await json(await api("DELETE", "/combos/dbcombo"));
    expect(two.error.message).toBe("Combo dbcombo is used by stored aliases dbalias, second: change them or delete them first.");
    expect((await api("DELETE", "/aliases/second")).status).toBe(200);
    // an alias a stored combo uses
    expect((await api("POST", "/aliases", { name: "inner", target: "p/claude-db" })).status).toBe(201);
    expect((await api("POST", "/combos", { name: "viainner", targets: [{ model: "inner" }] })).status).toBe(201);
    const aliasDel = await json(await api("DELETE", "/aliases/inner"));
    expect(aliasDel.error.message).toBe("Alias inner is used by stored combo viainner: change viainner's targets or delete it first.");
    expect((await api("DELETE", "/combos/viainner")).status).toBe(200);
    expect((await api("DELETE", "/aliases/inner")).status).toBe(200);
    expect((await api("GET", "/combos")).status).toBe(200);
    expect((await json(await api("GET", "/combos"))).combos.map((c: any) => c.name)).toContain("dbcombo");
    expect((await api("DELETE", "/aliases/dbalias")).status).toBe(200);
    expect(await modelIds()).not.toContain("dbalias");
    expect((await api("DELETE", "/aliases/dbalias")).status).toBe(404);
  });
});

describe("settings", () => {
  test("GET shows the block in force and who set each key", async () => {
    const s = await json(await api("GET", "/settings"));
    expect(s.file).toBe(gw.configPath);
    expect(s.settings.account_strategy).toBe("round-robin");
    expect(s.settings.flight_recorder).toEqual({ enabled: false, max_requests: 200, max_body_bytes: 1048576 });
    expect(s.sources.account_strategy).toBe("config");
    expect(s.sources.flight_recorder).toBe("default");
  });

  test("PATCH stores a key the file does not set and applies it to the next request; the file's keys are 409", async () => {
    const r = await api("PATCH", "/settings", { flight_recorder: { enabled: true } });
    expect(r.status).toBe(200);
    const s = await json(r);
    expect(s.settings.flight_recorder).toEqual({ enabled: true, max_requests: 200, max_body_bytes: 1048576 });
    expect(s.sources.flight_recorder).toBe("db");
    const res = await messages("p/claude-rec");
    await res.text();
    expect((await api("GET", `/calls/${res.headers.get("x-request-id")}/recording`)).status).toBe(200);

    const ro = await api("PATCH", "/settings", { account_strategy: "p2c" });
    expect(ro.status).toBe(409);
    expect((await json(ro)).error.message).toContain(`settings.account_strategy is set in the config file ${gw.configPath}`);
    const bad = await api("PATCH", "/settings", { flight_recorder: { max_requests: 0 } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.param).toBe("flight_recorder.max_requests");
    const unknown = await api("PATCH", "/settings", { no_such_setting: 1 });
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).error.param).toBe("no_such_setting");
  });

  test("PATCH trace_ring_size: the store keeps that many route traces from its next flush (it kept the file's, not even a restart applied a stored one)", async () => {
    expect((await api("PATCH", "/settings", { trace_ring_size: 1 })).status).toBe(200);
    const routeIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await messages("p/claude-ring");
      await res.text();
      routeIds.push(res.headers.get("x-switchyard-route-id")!);
      await gw.app.store.flush();
    }
    expect(await gw.app.store.getTrace(routeIds[0]!)).toBeUndefined();
    expect((await gw.app.store.getTrace(routeIds[1]!))?.routeId).toBe(routeIds[1]);
    expect((await api("PATCH", "/settings", { trace_ring_size: null })).status).toBe(200);
  });
});

describe("accounts disable and enable", () => {
  test("a disabled account gets no request from the next one on; enable brings it back", async () => {
    expect(await json(await api("POST", "/accounts/a1/disable"))).toEqual({ id: "a1", disabled: true });
    const status = await json(await api("GET", "/accounts"));
    expect(status.accounts.find((a: any) => a.id === "a1")).toMatchObject({ disabled: true, eligible: false });
    for (let i = 0; i < 3; i++) {
      const before = gw.fake.requests.length;
      const res = await messages("p/claude-d");
      await res.text();
      expect(gw.fake.requests.slice(before).map((r) => r.headers["x-api-key"])).toEqual([ENV.KEY_A2]);
    }
    expect((await api("POST", "/accounts/nope/disable")).status).toBe(404);
    const fileDisabled = await api("POST", "/accounts/off/enable");
    expect(fileDisabled.status).toBe(409);
    expect((await json(fileDisabled)).error.message).toContain(gw.configPath);
  });
});

describe("restart", () => {
  test("stored combos, aliases, settings and the disabled flag survive a restart", async () => {
    await api("POST", "/aliases", { name: "kept", target: "dbcombo" });
    await gw.stopGatewayOnly();
    gw = await startGateway(YAML, { env: ENV, dataDir: gw.dataDir, fake: gw.fake });
    expect(await modelIds()).toEqual(expect.arrayContaining(["dbcombo", "kept"]));
    const res = await messages("kept");
    await res.text();
    expect(res.status).toBe(200);
    expect(gw.fake.requests.at(-1)!.model).toBe("glm-first");
    expect((await json(await api("GET", "/settings"))).settings.flight_recorder.enabled).toBe(true);
    const a1 = (await json(await api("GET", "/accounts"))).accounts.find((a: any) => a.id === "a1");
    expect(a1.disabled).toBe(true);
    expect(await json(await api("POST", "/accounts/a1/enable"))).toEqual({ id: "a1", disabled: false });
    expect((await json(await api("GET", "/accounts"))).accounts.find((a: any) => a.id === "a1").disabled).toBe(false);
  });
});

describe("POST /config/reload", () => {
  test("says what changed: a key file's new secret changes its account", async () => {
    writeFileSync(keyFile, "sk-test-account-one-rotated\n");
    const r = await api("POST", "/config/reload");
    expect(r.status).toBe(200);
    const body = await json(r);
    expect(body).toMatchObject({ reloaded: true, file: gw.configPath });
    expect(body.changed).toEqual({ accounts: { added: [], removed: [], changed: ["a1"] } });
    expect(JSON.stringify(body)).not.toContain("rotated");
    // Nothing changed since: an empty answer.
    expect((await json(await api("POST", "/config/reload"))).changed).toEqual({});
  });

  test("the live event stream announces routing changes (names only): from the file with source file, through the admin API with source stored; an accounts-only change is not one", async () => {
    const events = await openEvents(gw.url, "?types=routing_changed");
    try {
      writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url).replace("  filealias: p/claude-file", "  filealias: p/claude-file\n  filenew: p/claude-file"));
      expect((await api("POST", "/config/reload")).status).toBe(200);
      const file = await events.waitFor((e) => e.event === "routing_changed", 5000);
      expect(file.data).toMatchObject({ type: "routing_changed", source: "file", aliases: { added: ["filenew"], removed: [], changed: [] } });
      expect(file.data.combos).toBeUndefined();
      expect((await api("POST", "/aliases", { name: "evented", target: "p/claude-db" })).status).toBe(201);
      const stored = await events.waitFor((e) => e.event === "routing_changed" && e.data.source === "stored", 5000);
      expect(stored.data.aliases).toEqual({ added: ["evented"], removed: [], changed: [] });
      expect((await api("DELETE", "/aliases/evented")).status).toBe(200);
      await events.waitFor((e) => e.event === "routing_changed" && e.data.aliases?.removed?.[0] === "evented", 5000);
      writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url));
      expect((await api("POST", "/config/reload")).status).toBe(200);
      await events.waitFor((e) => e.event === "routing_changed" && e.data.aliases?.removed?.[0] === "filenew", 5000);
      const seen = events.events.length;
      writeFileSync(keyFile, "sk-test-account-one-rotated-again\n");
      expect((await json(await api("POST", "/config/reload"))).changed).toEqual({ accounts: { added: [], removed: [], changed: ["a1"] } });
      // The next routing event is the next routing change's.
      expect((await api("POST", "/aliases", { name: "marker", target: "p/claude-db" })).status).toBe(201);
      await events.waitFor((e) => e.event === "routing_changed" && e.data.aliases?.added?.[0] === "marker", 5000);
      expect(events.events.slice(seen).filter((e) => e.event === "routing_changed").map((e) => e.data.aliases?.added)).toEqual([["marker"]]);
      expect((await api("DELETE", "/aliases/marker")).status).toBe(200);
    } finally {
      events.close();
    }
  });

  test("a file emptied by mistake is rejected as on SIGHUP, and the running config stays (it was put in force: no providers, no accounts)", async () => {
    writeFileSync(gw.configPath, "  \n");
    const r = await api("POST", "/config/reload");
    expect(r.status).toBe(400);
    const e = (await json(r)).error;
    expect({ code: e.code, issues: e.issues }).toEqual({ code: "config_invalid", issues: [{ path: "(root)", message: "the config file is empty; ignored" }] });
    const res = await messages("filecombo");
    await res.text();
    expect(res.status).toBe(200);
    writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url));
    expect((await json(await api("POST", "/config/reload"))).changed).toEqual({});
  });

  test("a file that writes a top-level key twice is rejected naming both lines, and the running config stays (the last block was put in force, the first lost)", async () => {
    const yaml = YAML.replaceAll("{{FAKE}}", gw.fake.url);
    // an aliases block pasted at the end of a file that has one: Bun's parser alone keeps the pasted one only
    writeFileSync(gw.configPath, `${yaml}\naliases:\n  pasted: p/claude-file\n`);
    const r = await api("POST", "/config/reload");
    expect(r.status).toBe(400);
    const e = (await json(r)).error;
    expect(e.code).toBe("config_invalid");
    expect(e.issues).toHaveLength(1);
    expect(e.issues[0].path).toBe("aliases");
    expect(e.issues[0].message).toStartWith('"aliases" is written twice in the same mapping (lines ');
    writeFileSync(gw.configPath, yaml);
    expect((await json(await api("POST", "/config/reload"))).changed).toEqual({});
  });

  test("a file edit that takes a stored combo's name says, in the reload's warnings, that the stored one is not in force, as long as it lasts (newuser13 J7)", async () => {
    expect((await api("POST", "/combos", { name: "spread", strategy: "fallback", targets: [{ model: "q/gpt-stored" }] })).status).toBe(201);
    try {
      writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url).replace("combos:\n", "combos:\n  - name: spread\n    targets:\n      - model: p/claude-file\n"));
      const body = await json(await api("POST", "/config/reload"));
      expect(body.changed.combos).toBeDefined();
      expect(body.warnings).toEqual([
        {
          path: "combos.spread",
          message: `the combo "spread" created through the admin API or the dashboard is not in force: ${gw.configPath} has a combo or alias of that name, which wins; rename or delete one of them`,
        },
      ]);
      // said as long as it lasts: a reload that finds the file as the watcher already read it says it too
      expect((await json(await api("POST", "/config/reload"))).warnings.map((w: { path: string }) => w.path)).toEqual(["combos.spread"]);
    } finally {
      writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url));
      expect((await json(await api("POST", "/config/reload"))).warnings).toEqual([]);
      expect((await api("DELETE", "/combos/spread")).status).toBe(200);
    }
  });

  test("a stored combo pinned to an account a file edit removed is refused naming it and why, not guessed as a model of that name (the request and the dry run)", async () => {
    expect((await api("POST", "/combos", { name: "pinned", strategy: "fallback", targets: [{ model: "r/gpt-pinned", account: "off" }] })).status).toBe(201);
    try {
      // the account `off` taken out of the file: the stored combo is out of force (active: false)
      writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url).replace(/  - id: off\n(    .*\n)+/, ""));
      const reload = await json(await api("POST", "/config/reload"));
      expect(reload.warnings.map((w: { path: string }) => w.path)).toEqual(["combos.pinned"]);
      const before = gw.fake.requests.length;
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "pinned", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(r.status).toBe(404);
      const e = (await json(r)).error;
      expect({ type: e.type, code: e.code, param: e.param }).toEqual({ type: "invalid_request_error", code: "model_not_found", param: "model" });
      expect(e.message).toStartWith("The combo `pinned` created through the admin API or the dashboard is not in force: targets[0].account: ");
      expect(e.message).toContain('"off"');
      expect(gw.fake.requests.length).toBe(before);
      const dry = await api("POST", "/dry-run", { model: "pinned", request: { messages: [{ role: "user", content: "hi" }] } });
      expect(dry.status).toBe(404);
      expect((await json(dry)).error.message).toBe(e.message);
    } finally {
      writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url));
      expect((await json(await api("POST", "/config/reload"))).warnings).toEqual([]);
      expect((await api("DELETE", "/combos/pinned")).status).toBe(200);
    }
  });

  test("an invalid file is rejected with its issues; the running config stays", async () => {
    writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url).replace("model: p/claude-file", "model: zz/claude-file"));
    const r = await api("POST", "/config/reload");
    expect(r.status).toBe(400);
    const e = (await json(r)).error;
    expect(e.code).toBe("config_invalid");
    expect(e.param).toBe("combos[0].targets[0].model");
    expect(e.issues[0].message).toContain('unknown provider "zz"');
    const res = await messages("filecombo");
    await res.text();
    expect(res.status).toBe(200);
    writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url));
    expect((await api("POST", "/config/reload")).status).toBe(200);
  });
});
